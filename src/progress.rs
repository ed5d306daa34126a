//! The progress bar of long scans (issue 6): bytes read of the total, files, rate, on
//! standard error. It stays hidden for the first second, so quick scans print nothing, and
//! is never shown unless the command asked for it (standard error a terminal, no `--quiet`).

use crate::ingest::source::Input;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const SHOW_AFTER: Duration = Duration::from_secs(1);
const TICK: Duration = Duration::from_millis(100);

/// Counts bytes read; when enabled, a thread draws them once the scan has run a second.
pub struct Progress {
    read: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
    drawer: Option<JoinHandle<()>>,
}

impl Progress {
    pub fn start(inputs: &[Input], enabled: bool) -> Progress {
        let read = Arc::new(AtomicU64::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let drawer = enabled.then(|| {
            let total: u64 = inputs.iter().map(Input::size_hint).sum();
            let files = inputs.len();
            let (read, done) = (read.clone(), done.clone());
            std::thread::spawn(move || draw(total, files, &read, &done))
        });
        Progress { read, done, drawer }
    }

    /// The count the readers add to.
    pub fn counter(&self) -> &AtomicU64 {
        &self.read
    }

    /// Stops drawing and clears the bar.
    pub fn finish(mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(d) = self.drawer.take() {
            let _ = d.join();
        }
    }
}

fn draw(total: u64, files: usize, read: &AtomicU64, done: &AtomicBool) {
    let started = Instant::now();
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
    let style = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ({bytes_per_sec}) {msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_message(format!("{files} files"));
    let mut shown = false;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(TICK);
        bar.set_position(read.load(Ordering::Relaxed));
        if !shown && started.elapsed() >= SHOW_AFTER {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            shown = true;
        }
    }
    bar.finish_and_clear();
}
