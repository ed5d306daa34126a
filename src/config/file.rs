//! The config file (`idem-audit.toml` in the working directory, or `--config FILE`): the
//! settings a team keeps beside its logs so that CI and people run the same audit. Every key
//! is also a flag; flags win. Unknown keys are errors, so that a typo is not silently ignored.
//!
//! ```toml
//! fail-on = "warning"
//! max-skew = "2s"
//! decision-window = "24h"
//! stuck-after = "5m"
//! window = "1m"
//! key-scheme = "run-step-tool-args"
//! exclude = ["*.md"]
//! whole-amounts = ["minor", "ledger.csv=major"]   # or one: "minor"
//!
//! [severity]
//! unattributed-effect = "off"
//!
//! [csv-map]
//! order = "Order Ref"
//!
//! [tool-kind]
//! send_money = "payout"
//! ```

use serde::Deserialize;
use std::collections::BTreeMap;

/// The file looked for in the working directory when `--config` is not given.
pub const DEFAULT_NAME: &str = "idem-audit.toml";

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct Raw {
    fail_on: Option<String>,
    max_skew: Option<String>,
    decision_window: Option<String>,
    stuck_after: Option<String>,
    window: Option<String>,
    key_scheme: Option<String>,
    #[serde(default)]
    exclude: Vec<String>,
    whole_amounts: Option<OneOrMany>,
    #[serde(default)]
    severity: BTreeMap<String, String>,
    #[serde(default)]
    csv_map: BTreeMap<String, String>,
    #[serde(default)]
    tool_kind: BTreeMap<String, String>,
}

/// A key that takes one value or a list of them (`whole-amounts = "minor"`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// What a config file says, in file order where order matters (sorted by name otherwise).
#[derive(Debug, Default)]
pub struct FileConfig {
    /// The path it was read from, for error messages (`max-skew in idem-audit.toml: ...`).
    pub path: String,
    pub fail_on: Option<String>,
    max_skew: Option<String>,
    decision_window: Option<String>,
    stuck_after: Option<String>,
    window: Option<String>,
    pub key_scheme: Option<String>,
    pub exclude: Vec<String>,
    /// `whole-amounts`, as the flag's values ([`super::whole_amounts`]).
    pub whole_amounts: Vec<String>,
    pub severity: Vec<(String, String)>,
    pub csv_map: Vec<(String, String)>,
    pub tool_kind: Vec<(String, String)>,
}

impl FileConfig {
    /// A duration setting by its key (`max-skew`, `decision-window`, `stuck-after`, `window`).
    pub fn windows(&self, key: &str) -> Option<&str> {
        match key {
            "max-skew" => self.max_skew.as_deref(),
            "decision-window" => self.decision_window.as_deref(),
            "stuck-after" => self.stuck_after.as_deref(),
            "window" => self.window.as_deref(),
            _ => None,
        }
    }

    /// Parses the text of a config file; `path` is only used in messages.
    pub fn parse(text: &str, path: &str) -> Result<FileConfig, String> {
        let raw: Raw = toml::from_str(text).map_err(|e| format!("{path}: {e}"))?;
        let pairs = |m: BTreeMap<String, String>| m.into_iter().collect::<Vec<_>>();
        Ok(FileConfig {
            path: path.to_string(),
            fail_on: raw.fail_on,
            max_skew: raw.max_skew,
            decision_window: raw.decision_window,
            stuck_after: raw.stuck_after,
            window: raw.window,
            key_scheme: raw.key_scheme,
            exclude: raw.exclude,
            whole_amounts: match raw.whole_amounts {
                None => Vec::new(),
                Some(OneOrMany::One(one)) => vec![one],
                Some(OneOrMany::Many(many)) => many,
            },
            severity: pairs(raw.severity),
            csv_map: pairs(raw.csv_map),
            tool_kind: pairs(raw.tool_kind),
        })
    }
}

/// Reads `--config FILE` (which must exist), else `./idem-audit.toml` when there is one.
/// Returns the settings and the path read, if any.
pub fn load(explicit: Option<&str>) -> Result<(FileConfig, Option<String>), String> {
    let path = match explicit {
        Some(p) => p.to_string(),
        None if std::path::Path::new(DEFAULT_NAME).is_file() => DEFAULT_NAME.to_string(),
        None => return Ok((FileConfig::default(), None)),
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{path}: cannot read the config file: {e}"))?;
    Ok((FileConfig::parse(&text, &path)?, Some(path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_section() {
        let c = FileConfig::parse(
            "fail-on = \"warning\"\nmax-skew = \"5s\"\nkey-scheme = \"run-step-tool-args\"\n\
             whole-amounts = \"minor\"\n\
             [severity]\nunattributed-effect = \"off\"\n[csv-map]\norder = \"Order Ref\"\n",
            "x.toml",
        )
        .unwrap();
        assert_eq!(c.whole_amounts, ["minor"]);
        let many = FileConfig::parse("whole-amounts = [\"minor\", \"a.csv=major\"]\n", "x.toml");
        assert_eq!(many.unwrap().whole_amounts, ["minor", "a.csv=major"]);
        assert_eq!(c.fail_on.as_deref(), Some("warning"));
        assert_eq!(c.windows("max-skew"), Some("5s"));
        assert_eq!(c.windows("window"), None);
        assert_eq!(c.key_scheme.as_deref(), Some("run-step-tool-args"));
        assert_eq!(c.severity, [("unattributed-effect".into(), "off".into())]);
        assert_eq!(c.csv_map, [("order".into(), "Order Ref".into())]);
    }

    #[test]
    fn a_typo_is_an_error_naming_the_file_and_key() {
        let e = FileConfig::parse("max-skwe = \"5s\"\n", "idem-audit.toml").unwrap_err();
        assert!(e.starts_with("idem-audit.toml:"), "{e}");
        assert!(e.contains("max-skwe"), "{e}");
    }
}
