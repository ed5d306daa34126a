//! `idem-audit key`: the reference key of a logical call (SPEC §4), byte-compatible with the
//! write-up's Python `idempotency_key()`, so an agent developer can check what a call should
//! carry. `--canonical` shows what is hashed; `--normalize` hashes the canonical form.

use super::{EXIT_OK, emit};
use crate::canonical::{canonical, python_dumps, reference_key};
use crate::cli::KeyArgs;
use serde_json::Value;

pub fn run(args: &KeyArgs) -> anyhow::Result<u8> {
    let value: Value = serde_json::from_str(&args.args)
        .map_err(|e| anyhow::anyhow!("--args: expected the tool arguments as JSON ({e})"))?;
    let out = render(args, &value);
    if let Some(note) = &out.note {
        eprintln!("idem-audit: {note}");
    }
    emit(None, format!("{}\n", out.line).as_bytes())?;
    Ok(EXIT_OK)
}

/// What `key` prints: one line on standard output, and a note for standard error.
#[derive(Debug, PartialEq)]
pub struct KeyOutput {
    pub line: String,
    pub note: Option<String>,
}

pub fn render(args: &KeyArgs, value: &Value) -> KeyOutput {
    let key = reference_key(&args.run, args.step, &args.tool, value, args.normalize);
    let note = args.normalize.then(|| {
        let plain = reference_key(&args.run, args.step, &args.tool, value, false);
        (plain != key).then(|| {
            format!(
                "normalizing changed the key: the arguments as given ({}) hash to {plain}",
                python_dumps(value)
            )
        })
    });
    let line = if args.canonical {
        if args.normalize {
            canonical(value)
        } else {
            python_dumps(value)
        }
    } else {
        key
    };
    KeyOutput {
        line,
        note: note.flatten(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(json: &str, canonical: bool, normalize: bool) -> (KeyArgs, Value) {
        let a = KeyArgs {
            run: "7f3a".into(),
            step: 4,
            tool: "issue_refund".into(),
            args: json.into(),
            canonical,
            normalize,
        };
        let v = serde_json::from_str(json).unwrap();
        (a, v)
    }

    #[test]
    fn normalize_says_when_it_changed_the_key() {
        let (a, v) = args(r#"{"order":"A-88214","amount_p":4500.0}"#, false, true);
        let out = render(&a, &v);
        assert_eq!(out.line, "21f4d5951991bb054dcaf0900af3d015");
        let note = out.note.unwrap();
        assert!(note.contains("7add4d603c2305a832dd5606cefc03db"), "{note}");
        assert!(note.contains("4500.0"), "{note}");
        let (a, v) = args(r#"{"order":"A-88214","amount_p":4500}"#, false, true);
        assert_eq!(render(&a, &v).note, None);
    }

    #[test]
    fn canonical_prints_what_is_hashed() {
        let (a, v) = args(r#"{"order":"A-88214","amount_p":4500.0}"#, true, false);
        assert_eq!(
            render(&a, &v).line,
            r#"{"amount_p":4500.0,"order":"A-88214"}"#
        );
        let (a, v) = args(r#"{"order":"A-88214","amount_p":4500.0}"#, true, true);
        assert_eq!(
            render(&a, &v).line,
            r#"{"amount_p":4500,"order":"A-88214"}"#
        );
    }
}
