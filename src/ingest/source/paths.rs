//! Paths resolved to inputs (SPEC §3): folders walked recursively in a fixed order, dotfiles
//! and `--exclude` globs skipped, a file named twice read once, and why a path cannot be
//! used said in words.

use crate::ingest;
use std::io;
use std::path::{Path, PathBuf};

/// One input to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    /// As the user will see it in reports: the path as given (joined for folder entries).
    pub display: String,
    pub origin: Origin,
    /// Named on the command line (always parsed), rather than found in a folder.
    pub explicit: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    File(PathBuf),
    Stdin,
    /// Found in a folder but cannot be read (a subfolder without permission, a symbolic
    /// link to nothing): reported as an unreadable input, with why, while the rest is read.
    Unreadable(String),
}

impl Input {
    /// The input's size in bytes where it is a file (compressed, if it is), for reading the
    /// largest first; 0 when unknown.
    pub fn size_hint(&self) -> u64 {
        match &self.origin {
            Origin::File(p) => std::fs::metadata(p).map_or(0, |m| m.len()),
            Origin::Stdin | Origin::Unreadable(_) => 0,
        }
    }
}

/// A path that could not be used, with the reason, for a one-line error.
#[derive(Debug)]
pub struct InputError {
    pub path: String,
    pub reason: String,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.reason)
    }
}

/// Expands the command line's paths into inputs, in a deterministic order: sorted by the
/// path shown (so the order of paths on the command line does not change the report), a
/// rotated log's files oldest first ([`ingest::rotated::order`]), each
/// input once (a file named twice, or named and inside a folder named, is read once).
pub fn resolve(paths: &[String], excludes: &[String]) -> Result<Vec<Input>, InputError> {
    let mut out = resolve_in_order(paths, excludes)?;
    out.sort_by(|a, b| ingest::rotated::order(&a.display).cmp(&ingest::rotated::order(&b.display)));
    out.dedup_by(|later, kept| {
        let same = later.display == kept.display;
        if same {
            kept.explicit |= later.explicit;
        }
        same
    });
    Ok(read_each_file_once(out))
}

/// The same file under two names (`dir/a.log` and `./dir/a.log`, an absolute path, a link)
/// is read once, under the first of its names in order: read twice, its every attempt was
/// sent twice.
fn read_each_file_once(inputs: Vec<Input>) -> Vec<Input> {
    let mut seen = std::collections::HashMap::new();
    let mut kept: Vec<Input> = Vec::with_capacity(inputs.len());
    for input in inputs {
        if let Some(id) = file_identity(&input) {
            if let Some(&i) = seen.get(&id) {
                let first: &mut Input = &mut kept[i];
                first.explicit |= input.explicit;
                continue;
            }
            seen.insert(id, kept.len());
        }
        kept.push(input);
    }
    kept
}

/// What tells one file from another: its device and inode.
#[cfg(unix)]
fn file_identity(input: &Input) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let Origin::File(path) = &input.origin else {
        return None;
    };
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.dev(), meta.ino()))
}

/// What tells one file from another: its real path.
#[cfg(not(unix))]
fn file_identity(input: &Input) -> Option<PathBuf> {
    let Origin::File(path) = &input.origin else {
        return None;
    };
    std::fs::canonicalize(path).ok()
}

fn resolve_in_order(paths: &[String], excludes: &[String]) -> Result<Vec<Input>, InputError> {
    let mut out = Vec::new();
    for p in paths {
        if p == "-" {
            out.push(Input {
                display: "-".into(),
                origin: Origin::Stdin,
                explicit: true,
            });
            continue;
        }
        let path = Path::new(p);
        let meta = std::fs::metadata(path).map_err(|e| InputError {
            path: p.clone(),
            reason: io_reason(&e),
        })?;
        if meta.is_dir() {
            let before = out.len();
            walk(path, p, excludes, &mut out, &mut Vec::new())?;
            if out.len() == before {
                return Err(InputError {
                    path: p.clone(),
                    reason: "folder holds no readable files (dotfiles and --exclude matches are skipped)".into(),
                });
            }
        } else {
            out.push(Input {
                display: p.clone(),
                origin: Origin::File(path.to_path_buf()),
                explicit: true,
            });
        }
    }
    Ok(out)
}

/// `ancestors` holds the real paths of the folders being walked, so that a symbolic link
/// back up the tree is followed once, not forever.
fn walk(
    dir: &Path,
    shown: &str,
    excludes: &[String],
    out: &mut Vec<Input>,
    ancestors: &mut Vec<PathBuf>,
) -> Result<(), InputError> {
    let err = |e: io::Error| InputError {
        path: shown.to_string(),
        reason: io_reason(&e),
    };
    let real = std::fs::canonicalize(dir).map_err(err)?;
    if ancestors.contains(&real) {
        return Ok(());
    }
    ancestors.push(real);
    let mut entries: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .map_err(err)?
        .filter_map(|e| e.ok())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(name, _)| !name.starts_with('.'))
        .collect();
    entries.sort();
    for (name, path) in entries {
        let shown_child = if shown.ends_with('/') {
            format!("{shown}{name}")
        } else {
            format!("{shown}/{name}")
        };
        if excludes
            .iter()
            .any(|g| glob_match(g, &name) || glob_match(g, &shown_child))
        {
            continue;
        }
        if path.is_dir() {
            // A subfolder that cannot be read is named, as an unreadable file there is, and
            // the rest of the folder is still audited.
            if let Err(e) = walk(&path, &shown_child, excludes, out, ancestors) {
                out.push(Input {
                    display: shown_child,
                    origin: Origin::Unreadable(format!(
                        "{}: a folder that cannot be read (--exclude '{name}' skips it)",
                        e.reason
                    )),
                    explicit: false,
                });
            }
        } else if let Some(why) = dangling(&path, &name) {
            out.push(Input {
                display: shown_child,
                origin: Origin::Unreadable(why),
                explicit: false,
            });
        } else {
            out.push(Input {
                display: shown_child,
                origin: Origin::File(path),
                explicit: false,
            });
        }
    }
    ancestors.pop();
    Ok(())
}

/// Why a folder's entry `name` at `path` is a symbolic link that leads to no file, when it
/// is one: a link to nothing (a stale `current.log`), or links that lead back to each other.
fn dangling(path: &Path, name: &str) -> Option<String> {
    let err = std::fs::metadata(path).err()?;
    if !path.is_symlink() {
        return None;
    }
    let target = std::fs::read_link(path).ok()?;
    let what = if err.kind() == io::ErrorKind::NotFound {
        "which does not exist"
    } else if is_link_loop(&err) {
        "which leads back to it: a symbolic link loop, never reaching a file"
    } else {
        return None;
    };
    Some(format!(
        "a symbolic link to `{}`, {what} (--exclude '{name}' skips it)",
        target.display()
    ))
}

/// Why a path cannot be used, in words: the system's own message for anything not named
/// here, without its `(os error N)`.
pub(super) fn io_reason(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file or folder".into(),
        io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ if is_link_loop(e) => {
            "a symbolic link loop: its links lead back to each other, never to a file".into()
        }
        _ => {
            let said = e.to_string();
            let said = match e.raw_os_error() {
                Some(code) => said
                    .strip_suffix(&format!(" (os error {code})"))
                    .unwrap_or(&said)
                    .to_string(),
                None => said,
            };
            let mut chars = said.chars();
            match chars.next() {
                Some(first) => first.to_lowercase().chain(chars).collect(),
                None => said,
            }
        }
    }
}

/// Too many symbolic links followed (`ELOOP`): links that lead back to each other.
fn is_link_loop(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

/// Shell-style glob: `*` (within a path segment), `**` (any depth), `?`.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    fn go(p: &[u8], t: &[u8]) -> bool {
        match p.first() {
            None => t.is_empty(),
            Some(b'*') if p.get(1) == Some(&b'*') => {
                let rest = p[2..].strip_prefix(b"/").unwrap_or(&p[2..]);
                (0..=t.len()).any(|i| go(rest, &t[i..]))
            }
            Some(b'*') => (0..=t.len())
                .take_while(|&i| i == 0 || t[i - 1] != b'/')
                .any(|i| go(&p[1..], &t[i..])),
            Some(b'?') => !t.is_empty() && t[0] != b'/' && go(&p[1..], &t[1..]),
            Some(c) => t.first() == Some(c) && go(&p[1..], &t[1..]),
        }
    }
    go(pattern.as_bytes(), text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("*.json", "truth.json"));
        assert!(!glob_match("*.json", "a/truth.json"));
        assert!(glob_match("**/*.json", "a/b/truth.json"));
        assert!(glob_match("logs/**", "logs/x/y.log"));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "abbc"));
    }

    #[cfg(unix)]
    #[test]
    fn a_file_under_two_names_is_read_once() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("agent.log");
        std::fs::write(&log, "x\n").unwrap();
        std::fs::write(dir.path().join("other.log"), "x\n").unwrap();
        let folder = dir.path().to_str().unwrap().to_string();
        let dotted = format!("{folder}/./agent.log");
        let got = resolve(&[folder.clone(), dotted], &[]).unwrap();
        let shown: Vec<&str> = got.iter().map(|i| i.display.as_str()).collect();
        assert_eq!(
            shown,
            [
                format!("{folder}/./agent.log"),
                format!("{folder}/other.log")
            ]
        );
        assert!(got[0].explicit);
    }

    #[test]
    fn a_symlink_loop_is_walked_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("logs")).unwrap();
        std::fs::write(dir.path().join("logs/a.log"), "x\n").unwrap();
        std::os::unix::fs::symlink("..", dir.path().join("logs/up")).unwrap();
        let root = dir.path().to_str().unwrap().to_string();
        let found = resolve(&[root], &[]).unwrap();
        let names: Vec<_> = found
            .iter()
            .map(|i| i.display.rsplit('/').next().unwrap())
            .collect();
        assert_eq!(names, ["a.log"]);
    }

    /// A subfolder that cannot be read and a symbolic link to nothing, found in a folder,
    /// are inputs of their own that say why they cannot be read (and how to skip them);
    /// the rest of the folder is still found.
    #[cfg(unix)]
    #[test]
    fn an_unreadable_subfolder_and_a_dangling_link_are_named_not_fatal() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("trace.log"), "x\n").unwrap();
        std::os::unix::fs::symlink("gone.log", dir.path().join("current.log")).unwrap();
        std::os::unix::fs::symlink("loop-b.log", dir.path().join("loop-a.log")).unwrap();
        std::os::unix::fs::symlink("loop-a.log", dir.path().join("loop-b.log")).unwrap();
        let private = dir.path().join("private");
        std::fs::create_dir(&private).unwrap();
        std::fs::write(private.join("other.log"), "x\n").unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o000)).unwrap();
        // Root reads any folder: then only the link is unreadable.
        let locked = std::fs::read_dir(&private).is_err();
        let root = dir.path().to_str().unwrap().to_string();
        let found = resolve(std::slice::from_ref(&root), &[]);
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o755)).unwrap();
        let found = found.unwrap();
        let why = |name: &str| {
            let input = found.iter().find(|i| i.display.ends_with(name)).unwrap();
            match &input.origin {
                Origin::Unreadable(why) => Some(why.clone()),
                _ => None,
            }
        };
        assert!(
            why("current.log")
                .unwrap()
                .contains("--exclude 'current.log'")
        );
        assert!(why("current.log").unwrap().contains("which does not exist"));
        assert_eq!(
            why("loop-a.log").unwrap(),
            "a symbolic link to `loop-b.log`, which leads back to it: a symbolic link loop, \
             never reaching a file (--exclude 'loop-a.log' skips it)"
        );
        assert_eq!(why("trace.log"), None);
        if locked {
            assert!(why("private").unwrap().contains("--exclude 'private'"));
        } else {
            assert_eq!(why("other.log"), None);
        }
        // Excluded, they are not inputs at all.
        let skip = ["private", "current.log", "loop-*.log"].map(String::from);
        let excluded = resolve(&[root], &skip).unwrap();
        assert_eq!(excluded.len(), 1);
    }
}
