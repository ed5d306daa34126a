//! The validated configuration the rest of the program trusts: flags (and the config file,
//! [`file`](mod@file)) parsed into typed values with errors that name the flag and what it expects.
//! Flags win over the file, the file over the defaults.

pub mod file;
pub mod whole_amounts;

use crate::cli::{FailOn, InputArgs, InputFormat, KeyScheme};
use crate::correlate::CorrelateOptions;
use crate::ingest::{Format, ParseOptions};
use crate::relevance::Relevance;
use crate::rules::{self, Level, Settings};
use crate::time::{Duration, Timestamp, Zone};
use chrono::{Datelike, NaiveDate};
use whole_amounts::WholeAmounts;

#[derive(Clone, Debug)]
pub struct AuditConfig {
    pub paths: Vec<String>,
    pub excludes: Vec<String>,
    pub forced_format: Option<Format>,
    pub parse: ParseOptions,
    pub correlate: CorrelateOptions,
    pub rules: Settings,
    pub strict: bool,
    pub quiet: bool,
    pub threads: Option<usize>,
    /// Show a progress bar on standard error (set by commands: a terminal, not `--quiet`).
    pub progress: bool,
    /// `--since` / `--until`: the period effects must be created in (until exclusive).
    pub period: Period,
    /// `fail-on` from the config file; a `--fail-on` flag wins over it.
    pub fail_on: Option<FailOn>,
    /// The config file that was read, if any.
    pub config_file: Option<String>,
    /// `--whole-amounts`: resolved per input once the inputs are known (see the audit).
    pub whole_amounts: WholeAmounts,
}

/// The period an audit reports on; `None` ends are open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Period {
    pub since: Option<Timestamp>,
    pub until: Option<Timestamp>,
}

impl Period {
    pub fn contains(&self, at: Timestamp) -> bool {
        self.since.is_none_or(|s| at >= s) && self.until.is_none_or(|u| at < u)
    }

    pub fn is_open(&self) -> bool {
        self.since.is_none() && self.until.is_none()
    }
}

impl AuditConfig {
    pub fn from_args(a: &InputArgs) -> Result<Self, String> {
        let (file, config_file) = file::load(a.config.as_deref())?;
        let from = |flag: &Option<String>, name: &str, default: &str| -> (String, String) {
            match (flag, file.windows(name)) {
                (Some(v), _) => (format!("--{name}"), v.clone()),
                (None, Some(v)) => (format!("{name} in {}", file.path), v.to_string()),
                (None, None) => (format!("--{name}"), default.to_string()),
            }
        };
        let dur = |flag: &Option<String>, name: &str, default: &str| {
            let (origin, text) = from(flag, name, default);
            duration(&origin, &text)
        };
        let max_skew = dur(&a.max_skew, "max-skew", "2s")?;
        let window = dur(&a.window, "window", "1m")?;
        if window.0 <= 0 {
            return Err("--window: expected a duration longer than zero".into());
        }
        let mut settings = Settings {
            max_skew,
            decision_window: dur(&a.decision_window, "decision-window", "24h")?,
            stuck_after: dur(&a.stuck_after, "stuck-after", "5m")?,
            window,
            ..Settings::default()
        };
        let severities = file
            .severity
            .iter()
            .map(|(r, l)| (format!("severity.{r} in {}", file.path), format!("{r}={l}")))
            .chain(
                a.severity
                    .iter()
                    .map(|s| (format!("--severity {s}"), s.clone())),
            );
        for (origin, s) in severities {
            let s = s.as_str();
            let (rule, level) = pair(&origin, s, "RULE=LEVEL")?;
            if rules::find(rule).is_none() {
                let ids: Vec<&str> = rules::registry().iter().map(|r| r.id).collect();
                return Err(format!(
                    "{origin}: unknown rule `{rule}`; known rules: {}",
                    ids.join(", ")
                ));
            }
            let level = Level::parse(level).ok_or_else(|| {
                format!("{origin}: unknown level `{level}`; expected error, warning, info or off")
            })?;
            settings.levels.insert(rule.to_string(), level);
        }
        let file_scheme = file
            .key_scheme
            .as_deref()
            .map(|k| {
                <KeyScheme as clap::ValueEnum>::from_str(k, true).map_err(|_| {
                    format!(
                        "key-scheme in {}: `{k}`: expected run-step-tool-args",
                        file.path
                    )
                })
            })
            .transpose()?;
        settings.key_scheme = a.key_scheme.or(file_scheme).map(|k| match k {
            KeyScheme::RunStepToolArgs => rules::KeyScheme::RunStepToolArgs,
        });
        enable_key_scheme_rule(&mut settings)?;
        let flag_csv_map: Vec<(String, String)> = a
            .csv_map
            .iter()
            .map(|m| {
                let (f, c) = pair("--csv-map", m, "FIELD=COLUMN")?;
                let fields = crate::ingest::csv::FIELDS;
                if !fields.iter().any(|(name, _)| name.eq_ignore_ascii_case(f)) {
                    let names: Vec<&str> = fields.iter().map(|(n, _)| *n).collect();
                    return Err(format!(
                        "--csv-map {m}: unknown field `{f}`; fields: {}",
                        names.join(", ")
                    ));
                }
                Ok((f.to_string(), c.to_string()))
            })
            .collect::<Result<_, _>>()?;
        let csv_map = merge_pairs(&file.csv_map, flag_csv_map);
        let flag_tool_kinds: Vec<(String, String)> = a
            .tool_kind
            .iter()
            .map(|m| {
                pair("--tool-kind", m, "TOOL=KIND").map(|(t, k)| (t.to_string(), k.to_string()))
            })
            .collect::<Result<_, _>>()?;
        let tool_kinds = merge_pairs(&file.tool_kind, flag_tool_kinds);
        let date = a
            .date
            .as_deref()
            .map(|d| {
                NaiveDate::parse_from_str(d, "%Y-%m-%d")
                    .ok()
                    // Instants are kept in nanoseconds: years far off would not fit.
                    .filter(|d| (1900..2200).contains(&d.year()))
                    .ok_or_else(|| {
                        format!("--date {d}: expected a date as YYYY-MM-DD, between 1900 and 2199")
                    })
            })
            .transpose()?;
        let tz = match a.tz.as_deref() {
            None => Zone::default(),
            Some(t) => Zone::parse(t).ok_or_else(|| {
                format!(
                    "--tz {t}: expected an offset such as Z, UTC, +01:00 or -0500, or a zone name such as Europe/Berlin"
                )
            })?,
        };
        let input_tz = (a.input_tz.iter())
            .map(|given| {
                let parsed = given
                    .rsplit_once('=')
                    .filter(|(name, _)| !name.is_empty())
                    .and_then(|(name, zone)| Some((name.to_string(), Zone::parse(zone)?)));
                parsed.ok_or_else(|| {
                    format!(
                        "--input-tz {given}: expected INPUT=ZONE, an input's path or file name and an offset or zone as for --tz (service.log=Europe/Berlin)"
                    )
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        // Each thread is started before any work: a mistyped count (99999999999) ran for
        // minutes starting threads on a 1 KB input.
        const MAX_THREADS: usize = 1024;
        match a.threads {
            Some(0) => return Err("--threads 0: expected at least 1".into()),
            Some(n) if n > MAX_THREADS => {
                return Err(format!("--threads {n}: expected at most {MAX_THREADS}"));
            }
            _ => {}
        }
        let period = Period {
            since: a
                .since
                .as_deref()
                .map(|t| instant("--since", t, tz))
                .transpose()?,
            until: a
                .until
                .as_deref()
                .map(|t| instant("--until", t, tz))
                .transpose()?,
        };
        if let (Some(s), Some(u)) = (period.since, period.until)
            && s >= u
        {
            return Err(format!(
                "--since {} is not before --until {}",
                s.display(),
                u.display()
            ));
        }
        let fail_on = file
            .fail_on
            .as_deref()
            .map(|f| {
                <FailOn as clap::ValueEnum>::from_str(f, true).map_err(|_| {
                    format!(
                        "fail-on in {}: `{f}`: expected error, warning, info or never",
                        file.path
                    )
                })
            })
            .transpose()?;
        let file_origin = format!("whole-amounts in {}", file.path);
        let whole_amounts = WholeAmounts::parse(
            (file
                .whole_amounts
                .iter()
                .map(|e| (file_origin.clone(), e.as_str())))
            .chain(
                a.whole_amounts
                    .iter()
                    .map(|e| ("--whole-amounts".into(), e.as_str())),
            ),
        )?;
        let mut excludes = file.exclude.clone();
        excludes.extend(a.exclude.iter().cloned());
        Ok(AuditConfig {
            paths: a.paths.clone(),
            excludes,
            forced_format: a.input_format.map(|f| match f {
                InputFormat::Text => Format::Text,
                InputFormat::Jsonl => Format::Jsonl,
                InputFormat::Logfmt => Format::Logfmt,
                InputFormat::NodeConsole => Format::NodeConsole,
                InputFormat::PinoPretty => Format::PinoPretty,
                InputFormat::JulXml => Format::JulXml,
                InputFormat::Csv => Format::Csv,
                InputFormat::Otlp => Format::Otlp,
                InputFormat::Records => Format::Records,
            }),
            parse: ParseOptions {
                date,
                tz,
                input_tz,
                csv_map,
                relevance: (!a.keep_idle_calls).then(|| Relevance {
                    tool_kinds: tool_kinds.clone(),
                }),
                // `timeline` asks for them; no other output shows them.
                keep_attrs: false,
                // Set per input, as each file is opened.
                file_written: None,
                line_processes: None,
            },
            correlate: CorrelateOptions {
                max_skew,
                tool_kinds,
                // Known once the inputs are: see the audit.
                logs: Vec::new(),
                whole_units: Vec::new(),
                exports: Vec::new(),
            },
            rules: settings,
            strict: a.strict,
            quiet: a.quiet,
            threads: a.threads,
            progress: false,
            period,
            fail_on,
            config_file,
            whole_amounts,
        })
    }
}

/// `key-not-derived` runs when a key scheme is declared (unless turned off), and cannot run
/// without one: asking for it by severity alone is a mistake worth saying so.
fn enable_key_scheme_rule(settings: &mut Settings) -> Result<(), String> {
    let id = "key-not-derived";
    match (settings.key_scheme, settings.levels.get(id)) {
        (Some(_), None) => {
            if let Some(rule) = rules::find(id) {
                settings
                    .levels
                    .insert(id.to_string(), Level::On(rule.default_severity));
            }
            Ok(())
        }
        (None, Some(Level::On(_))) => Err(format!(
            "--severity {id}: the rule needs a key scheme; add --key-scheme run-step-tool-args"
        )),
        _ => Ok(()),
    }
}

/// File entries first, then flags; a flag replaces a file entry for the same name.
fn merge_pairs(file: &[(String, String)], flags: Vec<(String, String)>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = file
        .iter()
        .filter(|(k, _)| !flags.iter().any(|(f, _)| f == k))
        .cloned()
        .collect();
    out.extend(flags);
    out
}

/// `2026-11-01` (midnight), `2026-11-01T09:30`, `2026-11-01 09:30:00.5`, with an optional
/// `Z` or offset; without one, `tz` applies (SPEC §3.6).
pub fn parse_instant(text: &str, tz: Zone) -> Option<Timestamp> {
    use chrono::{DateTime, NaiveDateTime};
    let t = text.trim();
    let local = |n: NaiveDateTime| {
        let nanos = n.and_utc().timestamp_nanos_opt()?;
        tz.instant_of_local(nanos)
    };
    if let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        return local(d.and_hms_opt(0, 0, 0)?);
    }
    if let Ok(dt) = DateTime::parse_from_rfc3339(&t.replacen(' ', "T", 1)) {
        return dt.timestamp_nanos_opt().map(Timestamp);
    }
    for f in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(n) = NaiveDateTime::parse_from_str(t, f) {
            return local(n);
        }
    }
    None
}

fn instant(flag: &str, text: &str, tz: Zone) -> Result<Timestamp, String> {
    parse_instant(text, tz).ok_or_else(|| {
        format!("{flag} {text}: expected a date (2026-11-01) or a timestamp (2026-11-01T09:30:00Z)")
    })
}

fn duration(flag: &str, text: &str) -> Result<Duration, String> {
    Duration::parse(text).map_err(|e| format!("{flag} {text}: {e}"))
}

fn pair<'a>(flag: &str, text: &'a str, shape: &str) -> Result<(&'a str, &'a str), String> {
    text.split_once('=')
        .map(|(a, b)| (a.trim(), b.trim()))
        .filter(|(a, b)| !a.is_empty() && !b.is_empty())
        .ok_or_else(|| format!("{flag} {text}: expected {shape}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use crate::finding::Severity;
    use clap::Parser;

    fn config(flags: &[&str]) -> Result<AuditConfig, String> {
        let mut argv = vec!["idem-audit", "scan", "x.log"];
        argv.extend_from_slice(flags);
        let Command::Scan(args) = Cli::try_parse_from(argv)
            .map_err(|e| e.to_string())?
            .command
        else {
            unreachable!("scan parses as scan")
        };
        AuditConfig::from_args(&args.input)
    }

    #[test]
    fn severity_overrides_including_off() {
        let c = config(&[
            "--severity",
            "unkeyed-retry=off",
            "--severity",
            "key-per-attempt=INFO",
        ])
        .unwrap();
        assert_eq!(c.rules.levels["unkeyed-retry"], Level::Off);
        assert_eq!(c.rules.levels["key-per-attempt"], Level::On(Severity::Info));
        let rule = rules::find("unkeyed-retry").unwrap();
        assert_eq!(c.rules.level_of(rule), Level::Off);
    }

    #[test]
    fn bad_severity_overrides_name_the_problem() {
        let e = config(&["--severity", "nope=off"]).unwrap_err();
        assert!(
            e.contains("unknown rule `nope`") && e.contains("key-per-attempt"),
            "{e}"
        );
        let e = config(&["--severity", "unkeyed-retry=loud"]).unwrap_err();
        assert!(e.contains("unknown level `loud`"), "{e}");
        let e = config(&["--severity", "unkeyed-retry"]).unwrap_err();
        assert!(e.contains("expected RULE=LEVEL"), "{e}");
    }

    #[test]
    fn key_scheme_enables_key_not_derived() {
        let rule = rules::find("key-not-derived").unwrap();
        assert_eq!(config(&[]).unwrap().rules.level_of(rule), Level::Off);
        let c = config(&["--key-scheme", "run-step-tool-args"]).unwrap();
        assert_eq!(c.rules.key_scheme, Some(rules::KeyScheme::RunStepToolArgs));
        assert_eq!(c.rules.level_of(rule), Level::On(Severity::Warning));
        let c = config(&[
            "--key-scheme",
            "run-step-tool-args",
            "--severity",
            "key-not-derived=error",
        ])
        .unwrap();
        assert_eq!(c.rules.level_of(rule), Level::On(Severity::Error));
        let c = config(&[
            "--key-scheme",
            "run-step-tool-args",
            "--severity",
            "key-not-derived=off",
        ])
        .unwrap();
        assert_eq!(c.rules.level_of(rule), Level::Off);
        let e = config(&["--severity", "key-not-derived=warning"]).unwrap_err();
        assert!(e.contains("--key-scheme"), "{e}");
    }

    #[test]
    fn the_config_file_is_merged_under_the_flags() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ci.toml");
        std::fs::write(
            &path,
            "key-scheme = \"run-step-tool-args\"\nmax-skew = \"5s\"\nwindow = \"5m\"\n\
             exclude = [\"*.md\"]\n[csv-map]\norder = \"Order Ref\"\nid = \"Refund\"\n\
             [tool-kind]\nsend_money = \"payout\"\n[severity]\nunkeyed-retry = \"info\"\n",
        )
        .unwrap();
        let p = path.to_str().unwrap();
        let c = config(&[
            "--config",
            p,
            "--csv-map",
            "id=Refund ID",
            "--max-skew",
            "1s",
        ])
        .unwrap();
        assert_eq!(c.config_file.as_deref(), Some(p));
        assert_eq!(c.rules.key_scheme, Some(rules::KeyScheme::RunStepToolArgs));
        let rule = rules::find("key-not-derived").unwrap();
        assert_eq!(c.rules.level_of(rule), Level::On(Severity::Warning));
        assert_eq!(c.rules.max_skew, Duration::from_secs(1), "the flag wins");
        assert_eq!(
            c.rules.window,
            Duration::from_secs(300),
            "the file beats the default"
        );
        assert_eq!(c.excludes, ["*.md"]);
        assert_eq!(
            c.parse.csv_map,
            [
                ("order".to_string(), "Order Ref".to_string()),
                ("id".to_string(), "Refund ID".to_string())
            ]
        );
        assert_eq!(
            c.correlate.tool_kinds,
            [("send_money".into(), "payout".into())]
        );
        assert_eq!(c.rules.levels["unkeyed-retry"], Level::On(Severity::Info));
        let c = config(&["--config", p, "--severity", "unkeyed-retry=off"]).unwrap();
        assert_eq!(c.rules.levels["unkeyed-retry"], Level::Off);
        std::fs::write(&path, "key-scheme = \"uuid\"\n").unwrap();
        let e = config(&["--config", p]).unwrap_err();
        assert!(e.contains("key-scheme in") && e.contains("uuid"), "{e}");
    }
}
