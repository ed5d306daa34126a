//! Instants and durations: UTC nanoseconds since the epoch, so that sorting and window
//! arithmetic are plain integer operations on the hot path. Parsing lives here too, since
//! every input format shares the same timestamp spellings (SPEC §3.6).

mod folds;
mod out_of_range;
mod zone;
pub use folds::Folds;
pub use out_of_range::why_out_of_range;
pub use zone::Zone;

pub const NANOS_PER_MILLI: i64 = 1_000_000;
pub const NANOS_PER_SEC: i64 = 1_000_000_000;
pub const NANOS_PER_DAY: i64 = 86_400 * NANOS_PER_SEC;

/// Instants earlier than this are time-only timestamps placed on 1970-01-01 (SPEC §3.6);
/// they are printed without a date.
const DATELESS_LIMIT: i64 = 30 * NANOS_PER_DAY;

/// How far a time-only line may run behind the one before it across midnight and still be
/// read as written out of order on the same night, not as a day later.
const OUT_OF_ORDER: i64 = 3600 * NANOS_PER_SEC;

/// The day a time-only stamp is on, relative to the previous line's (SPEC §3.6): +1 when
/// it is more than 12 hours earlier (midnight has passed); -1 when, across midnight, it is
/// at most an hour earlier (`23:59:59` after `00:00:01`: a line written late, the
/// previous night); else 0. A gap of 23 hours or more cannot be told from that anyway.
pub fn day_step(prev_tod: i64, tod: i64) -> i64 {
    if tod < prev_tod - NANOS_PER_DAY / 2 {
        1
    } else if tod > prev_tod && prev_tod + NANOS_PER_DAY - tod <= OUT_OF_ORDER {
        -1
    } else {
        0
    }
}

/// A UTC instant in nanoseconds since the Unix epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(pub i64);

impl Timestamp {
    pub fn from_millis(ms: i64) -> Self {
        Timestamp(ms.saturating_mul(NANOS_PER_MILLI))
    }

    pub fn nanos(self) -> i64 {
        self.0
    }

    /// True for time-only timestamps that had no date to go with them.
    pub fn is_dateless(self) -> bool {
        (0..DATELESS_LIMIT).contains(&self.0)
    }

    pub fn plus(self, d: Duration) -> Self {
        Timestamp(self.0.saturating_add(d.0))
    }

    pub fn minus(self, d: Duration) -> Self {
        Timestamp(self.0.saturating_sub(d.0))
    }

    pub fn since(self, earlier: Timestamp) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }

    /// `14:02:21.418` for dateless instants (with `+Nd` after a midnight rollover),
    /// `2026-11-03T14:02:21.418Z` otherwise. Milliseconds are always printed, so output
    /// widths are stable.
    pub fn display(self) -> String {
        if self.is_dateless() {
            let day = self.0.div_euclid(NANOS_PER_DAY);
            let in_day = self.0.rem_euclid(NANOS_PER_DAY);
            let ms = in_day / NANOS_PER_MILLI;
            let (h, m, s, f) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
            let mut out = format!("{h:02}:{m:02}:{s:02}.{f:03}");
            if day > 0 {
                out.push_str(&format!(" +{day}d"));
            }
            return out;
        }
        // Digits written one by one: reports print a few timestamps per finding (a month
        // has tens of thousands), and the formatting machinery took 3,000 instructions
        // for each. Nanoseconds in an i64 span the years 1677 to 2262, always four digits.
        let (y, mo, d) = civil_from_days(self.0.div_euclid(NANOS_PER_DAY));
        let ms = self.0.rem_euclid(NANOS_PER_DAY) / NANOS_PER_MILLI;
        let (h, mi, s, f) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
        let mut out = String::with_capacity(24);
        push_digits(&mut out, y, 4);
        let rest = [
            ('-', mo, 2),
            ('-', d, 2),
            ('T', h, 2),
            (':', mi, 2),
            (':', s, 2),
            ('.', f, 3),
        ];
        for (separator, n, width) in rest {
            out.push(separator);
            push_digits(&mut out, n, width);
        }
        out.push('Z');
        out
    }
}

/// `n` (not negative) in `width` decimal digits, zero-padded.
fn push_digits(out: &mut String, n: i64, width: u32) {
    for place in (0..width).rev() {
        out.push(char::from(b'0' + (n / 10_i64.pow(place) % 10) as u8));
    }
}

/// The civil date (year, month, day) of a day counted from 1970-01-01: the inverse of
/// [`days_from_civil`], after Howard Hinnant's `civil_from_days`.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.display())
    }
}

/// A signed span of time in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(pub i64);

impl Duration {
    pub const fn from_secs(s: i64) -> Self {
        Duration(s.saturating_mul(NANOS_PER_SEC))
    }

    pub fn from_millis(ms: i64) -> Self {
        Duration(ms.saturating_mul(NANOS_PER_MILLI))
    }

    /// Seconds with one decimal, for messages: `10.0 s`; an hour or more in hours and whole
    /// minutes (`9 h`, `1 h 30 min`), which "32400.0 s" hid.
    pub fn display_secs(self) -> String {
        const MINUTE: i64 = 60 * NANOS_PER_SEC;
        if self.0.unsigned_abs() >= 60 * MINUTE.unsigned_abs() {
            let minutes = (self.0 / MINUTE).saturating_add((self.0 % MINUTE) / (MINUTE / 2));
            let sign = if minutes < 0 { "-" } else { "" };
            let (h, m) = (minutes.unsigned_abs() / 60, minutes.unsigned_abs() % 60);
            return match m {
                0 => format!("{sign}{h} h"),
                m => format!("{sign}{h} h {m} min"),
            };
        }
        // Saturating: a span of three centuries (1900 to 2199, both valid) is near i64's end.
        let tenths = self.0.saturating_add(NANOS_PER_SEC / 20) / (NANOS_PER_SEC / 10);
        format!("{}.{} s", tenths / 10, (tenths % 10).abs())
    }

    /// Parses `2s`, `500ms`, `5m`, `24h`, `1d` (a bare number is seconds).
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let n: i64 = num
            .parse()
            .map_err(|_| format!("`{text}` is not a duration: expected a number and a unit such as 2s, 500ms, 5m, 24h"))?;
        let unit_nanos = match unit {
            "" | "s" => NANOS_PER_SEC,
            "ms" => NANOS_PER_MILLI,
            "m" | "min" => 60 * NANOS_PER_SEC,
            "h" => 3600 * NANOS_PER_SEC,
            "d" => NANOS_PER_DAY,
            _ => {
                return Err(format!(
                    "`{text}` has an unknown unit `{unit}`: expected ms, s, m, h or d"
                ));
            }
        };
        Ok(Duration(n.saturating_mul(unit_nanos)))
    }
}

/// A timestamp as written: a time of day alone, or a full instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stamp {
    /// Nanoseconds since midnight; the date comes from context (SPEC §3.6).
    TimeOfDay(i64),
    Instant(Timestamp),
}

fn digits(b: &[u8], n: usize) -> Option<i64> {
    if b.len() < n {
        return None;
    }
    let mut v = 0i64;
    for &c in &b[..n] {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as i64;
    }
    Some(v)
}

/// `HH:MM:SS[.fff...]` at the start of `b`: nanoseconds since midnight and bytes consumed.
/// Read byte by byte at fixed places: this runs for every line.
pub fn parse_time_of_day(b: &[u8]) -> Option<(i64, usize)> {
    let &[h1, h2, c1, m1, m2, c2, s1, s2, ..] = b else {
        return None;
    };
    let two = |a: u8, b: u8| {
        (a.is_ascii_digit() && b.is_ascii_digit()).then(|| ((a - b'0') * 10 + (b - b'0')) as i64)
    };
    let (h, m, s) = (two(h1, h2)?, two(m1, m2)?, two(s1, s2)?);
    if c1 != b':' || c2 != b':' || h > 23 || m > 59 || s > 60 {
        return None;
    }
    let mut nanos = (h * 3600 + m * 60 + s) * NANOS_PER_SEC;
    let mut used = 8;
    if matches!(b.get(8), Some(b'.') | Some(b',')) {
        // Digits past the ninth are read and dropped.
        let frac = &b[9..];
        let n = frac.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        let mut value = 0i64;
        for &c in &frac[..n.min(9)] {
            value = value * 10 + (c - b'0') as i64;
        }
        nanos += value * 10i64.pow(9 - n.min(9) as u32);
        used = 9 + n;
    }
    // A time must end at a word boundary: `14:02:11.402x` is no time.
    match b.get(used) {
        Some(c) if c.is_ascii_alphanumeric() && !matches!(c, b'Z' | b'z') => None,
        _ => Some((nanos, used)),
    }
}

/// Days since the epoch of a proleptic Gregorian date; `None` for no such date. Plain
/// arithmetic (Howard Hinnant's `days_from_civil`): it runs for every dated line, and
/// building a chrono date there was a visible part of a scan.
pub fn days_from_civil(y: i64, m: i64, d: i64) -> Option<i64> {
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    Some(era * 146_097 + day_of_era - 719_468)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `YYYY-MM-DD` at the start of `b`: days since the epoch.
pub fn parse_date(b: &[u8]) -> Option<i64> {
    let y = digits(b, 4)?;
    let m = digits(b.get(5..)?, 2)?;
    let d = digits(b.get(8..)?, 2)?;
    // `2026/12/06`: Go's `log` package (and nginx's error log) write the date so.
    if b[4] != b[7] || (b[4] != b'-' && b[4] != b'/') {
        return None;
    }
    days_from_civil(y, m, d)
}

/// `Z`, `+01`, `+01:00`, `+0100`, `-05:30` at the start of `b`: offset seconds, bytes used.
fn parse_offset(b: &[u8]) -> Option<(i64, usize)> {
    match b.first()? {
        b'Z' | b'z' => Some((0, 1)),
        sign @ (b'+' | b'-') => {
            let h = digits(&b[1..], 2)?;
            let (m, used) = if b.get(3) == Some(&b':') {
                (digits(b.get(4..)?, 2)?, 6)
            } else if let Some(m) = b.get(3..).and_then(|r| digits(r, 2)) {
                (m, 5)
            } else {
                (0, 3)
            };
            if h > 23 || m > 59 {
                return None;
            }
            let secs = h * 3600 + m * 60;
            Some((if *sign == b'-' { -secs } else { secs }, used))
        }
        _ => None,
    }
}

/// The offset written at the end of a dated stamp (`...T19:32:11.501+05:30`, `[...Z]`), in
/// seconds; `None` when it has none.
#[cold]
pub fn written_offset(stamp: &[u8]) -> Option<i64> {
    let b = stamp.strip_prefix(b"[").unwrap_or(stamp);
    let b = b.strip_suffix(b"]").unwrap_or(b);
    parse_date(b)?;
    let (_, used) = parse_time_of_day(b.get(11..)?)?;
    let (secs, _) = parse_offset(&b[11 + used..])?;
    Some(secs)
}

/// A timestamp at the start of `b`: `HH:MM:SS[.fff]` or
/// `YYYY-MM-DD[T ]HH:MM:SS[.fff][Z|±HH[:MM]]`. Offset-less instants are in `zone`.
pub fn parse_stamp(b: &[u8], zone: Zone) -> Option<(Stamp, usize)> {
    parse_stamp_with(b, parse_date, |local| zone.offset_of_local(local))
}

/// The last date read, to skip the calendar on the next line of the same day; and the
/// last minute read in the commonest spelling, to read only the seconds of the next stamp
/// in that minute (the lines of one call are milliseconds apart). Being the input's reader
/// of its lines' times, it also keeps which pass of a fold they are in ([`Folds`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct DateCache {
    text: [u8; 10],
    days: i64,
    known: bool,
    /// `YYYY-MM-DDTHH:MM`, as read, and the minute's start in nanoseconds.
    minute: [u8; 16],
    minute_start: i64,
    minute_known: bool,
    pub folds: Folds,
}

impl DateCache {
    /// [`parse_stamp`] of a line's own time, reading a date the same as the last one's
    /// from the cache, and a local time in a fold in the pass the lines so far tell.
    /// The common case is inlined into the caller (forced: left to the compiler, it was
    /// not once the minute's shortcut was added, and the call cost 2 % of an idle call's
    /// reading); the general reading is not, so that its set-up is paid only when it runs.
    #[inline(always)]
    pub fn parse_stamp(&mut self, b: &[u8], zone: Zone) -> Option<(Stamp, usize)> {
        self.read(b, zone, None)
    }

    /// [`Self::parse_stamp`] of a time written beside a line's own (`line_at`): a
    /// settlement. It moves no pass of a fold: a local time in one is read as the first
    /// pass not before the line ([`Zone::offset_not_before`]).
    #[inline(always)]
    pub fn parse_stamp_beside(
        &mut self,
        b: &[u8],
        zone: Zone,
        line_at: Timestamp,
    ) -> Option<(Stamp, usize)> {
        self.read(b, zone, Some(line_at))
    }

    #[inline(always)]
    fn read(&mut self, b: &[u8], zone: Zone, beside: Option<Timestamp>) -> Option<(Stamp, usize)> {
        if let Some(at) = self.same_minute_millis_utc(b) {
            return Some((Stamp::Instant(at), 24));
        }
        if let Some(at) = self.same_day_millis_utc(b) {
            return Some((Stamp::Instant(at), 24));
        }
        self.parse_stamp_generally(b, zone, beside)
    }

    #[inline(never)]
    fn parse_stamp_generally(
        &mut self,
        b: &[u8],
        zone: Zone,
        beside: Option<Timestamp>,
    ) -> Option<(Stamp, usize)> {
        let folds = &mut self.folds;
        let offset_of = |local: i64| match beside {
            None => folds.offset_of_line(zone, local),
            Some(line_at) => zone.offset_not_before(local, line_at),
        };
        let date = |b: &[u8]| {
            if self.known && b.get(..10) == Some(&self.text[..]) {
                return Some(self.days);
            }
            let days = parse_date(b)?;
            self.text.copy_from_slice(&b[..10]);
            self.days = days;
            self.known = true;
            Some(days)
        };
        parse_stamp_with(b, date, offset_of)
    }
}

impl DateCache {
    /// The commonest spelling, `YYYY-MM-DDTHH:MM:SS.fffZ`, in the cached minute: only its
    /// seconds and milliseconds are read. Anything else is left to `same_day_millis_utc`,
    /// then to the general reading, which give the same answer. Both shortcuts are inlined
    /// into both callers (the line's reading and the read-ahead): they run for every line.
    #[inline(always)]
    fn same_minute_millis_utc(&self, b: &[u8]) -> Option<Timestamp> {
        let t = b.get(..24).filter(|_| self.minute_known)?;
        if t[..16] != self.minute {
            return None;
        }
        // `:SS.fffZ` read as one word: the minute's bytes were checked when it was cached.
        let word = u64::from_le_bytes(t[16..24].try_into().expect("8 bytes"));
        let x = ascii_digits(word, 0xff00_0000_ff00_00ff, 0x5a00_0000_2e00_003a)?;
        // Each lane times ten plus the next lane (as `same_day_millis_utc` reads its pairs):
        // the seconds in lane 1, the first two digits of the milliseconds in lane 4.
        let pairs = x * 10 + (x >> 8);
        let lane = |w: u64, i: u32| ((w >> (8 * i)) & 0xff) as i64;
        let sec = lane(pairs, 1);
        let ms = lane(pairs, 4) * 10 + lane(x, 6);
        if sec > 60 {
            return None;
        }
        let within = sec * NANOS_PER_SEC + ms * 1_000_000;
        self.minute_start.checked_add(within).map(Timestamp)
    }

    /// The commonest spelling on the cached day, read at fixed places; its minute is
    /// cached for the next stamp.
    #[inline(always)]
    fn same_day_millis_utc(&mut self, b: &[u8]) -> Option<Timestamp> {
        let t = b.get(..24).filter(|_| self.known)?;
        if t[..10] != self.text || t[10] != b'T' || t[19] != b'.' || t[23] != b'Z' {
            return None;
        }
        // `HH:MM:SS` and `fffZ` read as words: one check of each for digits.
        let word = |at: usize| u64::from_le_bytes(t[at..at + 8].try_into().expect("8 bytes"));
        let hms = ascii_digits(word(11), 0x0000_ff00_00ff_0000, 0x0000_3a00_003a_0000)?;
        let ms = ascii_digits(word(16) >> 32, 0xffff_ffff_ff00_0000, 0x5a00_0000)?;
        // Each lane times ten plus the next lane: the two-digit numbers, all at once (a
        // lane stays below 100, so nothing carries into the next).
        let pairs = |w: u64| w * 10 + (w >> 8);
        let lane = |w: u64, i: u32| ((w >> (8 * i)) & 0xff) as i64;
        let two = pairs(hms);
        let (h, m, sec) = (lane(two, 0), lane(two, 3), lane(two, 6));
        let ms = lane(pairs(ms), 0) * 10 + lane(ms, 2);
        if h > 23 || m > 59 || sec > 60 {
            return None;
        }
        let minute = self
            .days
            .checked_mul(NANOS_PER_DAY)?
            .checked_add((h * 3600 + m * 60) * NANOS_PER_SEC)?;
        let nanos = minute.checked_add(sec * NANOS_PER_SEC + ms * 1_000_000)?;
        self.minute.copy_from_slice(&t[..16]);
        self.minute_start = minute;
        self.minute_known = true;
        Some(Timestamp(nanos))
    }
}

/// The word's digit values (`b'0'`..`b'9'` as 0..9, byte for byte), if every byte outside
/// `fixed` is an ASCII digit and the bytes under `fixed` equal `expected`.
fn ascii_digits(word: u64, fixed: u64, expected: u64) -> Option<u64> {
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    const HIGH_NIBBLES: u64 = 0xf0f0_f0f0_f0f0_f0f0;
    const SIXES: u64 = 0x0606_0606_0606_0606;
    const FOURS: u64 = 0x1010_1010_1010_1010;
    if word & fixed != expected {
        return None;
    }
    // A digit XOR `0` is 0..9: no high nibble, and adding 6 stays below 16 (no carries
    // cross lanes, since every lane is below 16 before the add).
    let x = (word ^ ZEROS) & !fixed;
    let digits = x & HIGH_NIBBLES == 0 && (x + SIXES) & FOURS == 0;
    digits.then_some(x)
}

/// `offset_of` gives the offset of an offset-less local time (`zone`'s, or the pass of a
/// fold the input's order tells).
fn parse_stamp_with(
    b: &[u8],
    date: impl FnOnce(&[u8]) -> Option<i64>,
    offset_of: impl FnOnce(i64) -> i64,
) -> Option<(Stamp, usize)> {
    if let Some(days) = date(b) {
        let sep = *b.get(10)?;
        if sep != b'T' && sep != b't' && sep != b' ' {
            return None;
        }
        let (tod, used) = parse_time_of_day(&b[11..])?;
        let mut end = 11 + used;
        // Checked: a year outside 1678..2262 does not fit in i64 nanoseconds, and input
        // bytes must never panic (or wrap into a plausible-looking instant).
        let local = days.checked_mul(NANOS_PER_DAY)?.checked_add(tod)?;
        let offset = match b.get(end..).and_then(parse_offset) {
            Some((secs, n)) => {
                end += n;
                secs
            }
            None => offset_of(local),
        };
        let nanos = local.checked_sub(offset.checked_mul(NANOS_PER_SEC)?)?;
        return Some((Stamp::Instant(Timestamp(nanos)), end));
    }
    let (tod, used) = parse_time_of_day(b)?;
    Some((Stamp::TimeOfDay(tod), used))
}

#[cfg(test)]
mod display_tests;
#[cfg(test)]
mod parse_tests;
