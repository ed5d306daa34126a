//! The command line (clap derive): commands, flags and value enums. Values are parsed here
//! and validated into an [`crate::config::AuditConfig`] before any input is read.

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "idem-audit",
    version,
    about = "Find side effects that happened more than once in agent traces and payments logs, and why",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// Parsed once per process: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Audit the inputs with every rule (the main job).
    Scan(ScanArgs),
    /// Print the reference idempotency key of a logical call.
    Key(KeyArgs),
    /// List every rule: id, default severity, one line.
    Rules,
    /// Print a rule's full explanation.
    Explain(ExplainArgs),
    /// Every event that concerns one order, run or key, client and service merged in time order.
    Timeline(TimelineArgs),
    /// Dedup-layer health per time window: keyed requests, replays, conflicts, spikes.
    Metrics(MetricsArgs),
    /// Print a shell completion script.
    Completions(CompletionsArgs),
    /// Print the man page (or write one page per command into a folder).
    Man(ManArgs),
}

#[derive(Args, Debug, Clone)]
pub struct KeyArgs {
    /// The run id (survives crashes: from the run's persisted state).
    #[arg(long)]
    pub run: String,
    /// The step number.
    #[arg(long)]
    pub step: u32,
    /// The tool name.
    #[arg(long)]
    pub tool: String,
    /// The tool arguments as JSON.
    #[arg(long, value_name = "JSON")]
    pub args: String,
    /// Print the canonical arguments that are hashed instead of the key.
    #[arg(long)]
    pub canonical: bool,
    /// Write integral floats as integers (`4500.0` -> `4500`) before hashing, and say on
    /// standard error when that changed the key.
    #[arg(long)]
    pub normalize: bool,
}

#[derive(Args, Debug, Clone)]
pub struct ExplainArgs {
    /// A rule id, as `idem-audit rules` lists them.
    pub rule: String,
}

#[derive(Args, Debug, Clone)]
pub struct InputArgs {
    /// Files or folders to read (folders recursively); `-` reads standard input.
    #[arg(required = true, value_name = "PATHS")]
    pub paths: Vec<String>,

    /// Skip files in folders whose name or path matches this glob (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,

    /// Force the input format instead of detecting it per file.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub input_format: Option<InputFormat>,

    /// Date for time-only timestamps (YYYY-MM-DD), unless a file has a `# date:` header.
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub date: Option<String>,

    /// Offset or zone for timestamps that carry none: `Z`, `+01:00`, `-0500`, or a zone
    /// name such as `Europe/Berlin` (its offset follows summer time).
    // A negative offset (`-05:00`) starts with a hyphen: a value, not a flag.
    #[arg(long, value_name = "OFFSET|ZONE", allow_hyphen_values = true)]
    pub tz: Option<String>,

    /// The offset or zone of one input's timestamps that carry none, where it differs from
    /// `--tz` (a service logging local time beside an agent logging UTC): the input's path
    /// as given or its file name, `=`, then as for `--tz`. Repeatable.
    #[arg(long, value_name = "INPUT=OFFSET|ZONE")]
    pub input_tz: Vec<String>,

    /// How amounts written as bare whole numbers (`"amount": 4500` in GBP) are read where
    /// no format says: `minor` (45.00), `major` (4,500.00), or `auto`, learnt from the calls
    /// a log's effects matched, else unknown [default: auto]. `INPUT=UNIT` for one input
    /// (its path as given or its file name). Repeatable.
    #[arg(long, value_name = "[INPUT=]UNIT")]
    pub whole_amounts: Vec<String>,

    /// Client/server clock difference tolerated by every time window used for matching
    /// [default: 2s].
    #[arg(long, value_name = "DURATION")]
    pub max_skew: Option<String>,

    /// Effects of one order and amount from different calls within this window are a
    /// duplicate decision [default: 24h].
    #[arg(long, value_name = "DURATION")]
    pub decision_window: Option<String>,

    /// An idempotency record still in progress after this long is stuck [default: 5m].
    #[arg(long, value_name = "DURATION")]
    pub stuck_after: Option<String>,

    /// Width of the metrics windows, used by `metrics` and by the replay-rate-spike rule;
    /// windows start at multiples of the width since the epoch [default: 1m].
    #[arg(long, value_name = "DURATION")]
    pub window: Option<String>,

    /// Only effects created at or after this date or timestamp count (an ISO date such as
    /// 2026-11-01, or a timestamp); earlier events still serve as evidence.
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,

    /// Only effects created before this date or timestamp count (exclusive).
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,

    /// Read settings from this TOML file instead of ./idem-audit.toml (flags win over it).
    #[arg(long, value_name = "FILE")]
    pub config: Option<String>,

    /// Map a CSV column to a field: `order=Order Ref` (repeatable).
    #[arg(long, value_name = "FIELD=COLUMN")]
    pub csv_map: Vec<String>,

    /// Which effect kind a tool produces: `send_money=payout` (repeatable).
    #[arg(long, value_name = "TOOL=KIND")]
    pub tool_kind: Vec<String>,

    /// Change a rule's severity, or turn it off: `unattributed-effect=off` (repeatable).
    #[arg(long, value_name = "RULE=LEVEL")]
    pub severity: Vec<String>,

    /// Check keys against a derivation scheme (enables `key-not-derived`).
    #[arg(long, value_enum, value_name = "SCHEME")]
    pub key_scheme: Option<KeyScheme>,

    /// Exit 2 when any line could not be parsed (after the report is written).
    #[arg(long)]
    pub strict: bool,

    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,

    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// Keep every call in memory, even those no rule can use (idle lookups and emails are
    /// otherwise dropped as they are read). Slower; the findings are the same.
    #[arg(long)]
    pub keep_idle_calls: bool,
}

#[derive(Args, Debug, Clone)]
pub struct ScanArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,

    /// Write the report to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<String>,

    /// Exit 1 when there is a finding at or above this severity [default: error].
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOn>,

    /// Accept the findings listed in this baseline file: they are not reported and do not
    /// count for the exit status.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<String>,

    /// Write the current findings as a baseline file (and exit 0 unless an input failed).
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<String>,
}

#[derive(Args, Debug, Clone)]
#[command(group(clap::ArgGroup::new("subject").required(true).args(["order", "run", "key"])))]
pub struct TimelineArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// Everything that concerns this order.
    #[arg(long, value_name = "ID")]
    pub order: Option<String>,

    /// Everything that concerns this agent run.
    #[arg(long, value_name = "ID")]
    pub run: Option<String>,

    /// Everything that concerns this idempotency key.
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,

    /// Write the timeline to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct MetricsArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,

    /// Write the metrics to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Args, Debug, Clone)]
pub struct ManArgs {
    /// Write idem-audit.1 and one page per command (idem-audit-scan.1, ...) into this folder
    /// instead of printing the main page.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    Text,
    Jsonl,
    Logfmt,
    /// Node.js's console: `ISO-TIME words { inspected: 'object' }`
    NodeConsole,
    /// pino's log through pino-pretty: `[TIME] LEVEL (name/pid): message`, members below
    PinoPretty,
    /// java.util.logging's XMLFormatter (a FileHandler's default)
    JulXml,
    Csv,
    /// OTLP/JSON spans, or an OpenTelemetry SDK's console exporter's span dump
    Otlp,
    Records,
}

/// How agents are expected to derive their keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KeyScheme {
    /// The write-up's `idempotency_key(run, step, tool, args)` (`idem-audit key`).
    RunStepToolArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Table,
    Json,
    Csv,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Error,
    Warning,
    Info,
    Never,
}
