use super::Duration;

/// Seconds below an hour; hours and whole minutes from an hour on, either sign.
#[test]
fn spans_are_said_in_seconds_below_an_hour_and_hours_above() {
    assert_eq!(Duration::from_millis(10_000).display_secs(), "10.0 s");
    assert_eq!(Duration::from_secs(3599).display_secs(), "3599.0 s");
    assert_eq!(Duration::from_secs(3600).display_secs(), "1 h");
    assert_eq!(Duration::from_secs(32_400).display_secs(), "9 h");
    assert_eq!(Duration::from_secs(5_430).display_secs(), "1 h 31 min");
    assert_eq!(Duration::from_secs(-7_200).display_secs(), "-2 h");
    assert_eq!(Duration(i64::MAX).display_secs(), "2562047 h 47 min");
}
