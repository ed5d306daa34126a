//! The service side of the model: effects merged by (kind, id) with their amounts and
//! matches, idempotency records and replays.

use super::*;
use crate::money::{Currency, Money};

/// An effect as the service recorded it, merged over every line that logged it.
#[derive(Clone, Debug)]
pub struct EffectRec {
    pub kind: Text,
    pub id: Text,
    pub order: Option<Text>,
    /// Read through [`EffectRec::amount`] and [`EffectRec::whole`].
    pub(crate) written: Option<WrittenAmount>,
    pub key: Option<Text>,
    pub created: Timestamp,
    pub state: Option<Text>,
    pub state_at: Option<Timestamp>,
    pub happened: bool,
    /// Every line that logged it: almost always one, so a boxed slice (16 bytes), not a
    /// `Vec` (24).
    pub locs: Box<[Loc]>,
    pub matched: Option<AttemptId>,
    pub matched_by: Option<MatchedBy>,
}

impl EffectRec {
    /// Its amount in minor units, when known.
    pub fn amount(&self) -> Option<Money> {
        self.written
            .filter(|w| w.unit_known)
            .map(WrittenAmount::money)
    }

    /// The bare whole number an amount of unknown unit was written as
    /// ([`crate::event::Effect::whole`]), until correlation learns its unit
    /// (`correlate/whole_amounts.rs`).
    pub fn whole(&self) -> Option<Money> {
        self.written
            .filter(|w| !w.unit_known)
            .map(WrittenAmount::money)
    }

    /// What the effect's amount is compared by: its amount, else the whole number it was
    /// written as (`whole`: equal numbers are equal amounts, whichever the unit), never
    /// equal to a known amount.
    pub fn amount_key(&self) -> Option<(Currency, i64, bool)> {
        (self.written).map(|w| (w.currency, w.minor, w.unit_known))
    }
}

/// An effect's amount as its line wrote it: in minor units, or a bare whole number whose
/// unit is not known yet. One field rather than two `Option<Money>`: the model holds every
/// effect of a month, and the second made each record 16 bytes larger (the rules, walking
/// them, took 12-15 % longer at 1 GB). Money's fields are spelled out so that the flag
/// takes the padding after the currency (a nested `Money` keeps its own padding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WrittenAmount {
    minor: i64,
    currency: Currency,
    unit_known: bool,
}

impl WrittenAmount {
    pub(crate) fn new(money: Money, unit_known: bool) -> Self {
        WrittenAmount {
            minor: money.minor,
            currency: money.currency,
            unit_known,
        }
    }

    /// `amount` when there is one, else `whole` ([`crate::event::Effect`]'s two).
    pub(crate) fn of(amount: Option<Money>, whole: Option<Money>) -> Option<Self> {
        let known = amount.map(|money| WrittenAmount::new(money, true));
        known.or(whole.map(|money| WrittenAmount::new(money, false)))
    }

    pub(crate) fn unit_known(self) -> bool {
        self.unit_known
    }

    fn money(self) -> Money {
        Money::new(self.minor, self.currency)
    }

    /// Orders amounts by what they say, never by where they were read: the currency's
    /// code, then the number.
    pub(crate) fn ordering_key(self) -> (&'static str, i64) {
        (self.currency.as_str(), self.minor)
    }

    /// `GBP 45.00`; a number of unknown unit as such (`GBP 4500, unit not known`).
    pub(crate) fn describe(self) -> String {
        if self.unit_known {
            self.money().display()
        } else {
            format!("{} {}, unit not known", self.currency, self.minor)
        }
    }
}

/// Lines of one effect (a log and an export of it, two replicas) that disagree on its
/// amount, order or key. The value kept never depends on which was read first, so that a
/// month's findings do not depend on files' names: [`crate::correlate::disputes`] chooses
/// it once every line is in. The disagreement is reported as a warning on the later line,
/// since one of them is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disagreement {
    /// The effect, in [`crate::correlate::Model::effects`].
    pub effect: u32,
    /// The line that disagreed with the effect's lines before it.
    pub at: Loc,
    pub earlier: Vec<Loc>,
    pub field: Disputed,
    /// What the earlier lines said, and what `at` says. (What the model used is the
    /// effect's own value.)
    pub kept: String,
    pub other: String,
}

/// What lines of one effect disagree on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disputed {
    Amount,
    Order,
    /// The idempotency key the service logged: it decides whether the client minted a key
    /// per attempt or the service ignored one.
    Key,
}

impl Disputed {
    pub fn as_str(self) -> &'static str {
        match self {
            Disputed::Amount => "amount",
            Disputed::Order => "order",
            Disputed::Key => "key",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchedBy {
    EffectId,
    Key,
    OrderAndTime,
    /// A copy (a gateway's retry, a queue's redelivery) of an effect of the same kind,
    /// order and amount matched to the attempt by one of the others, created within
    /// `--max-skew` plus [`DELIVERY_SLACK`] of it: see `correlate/copies.rs`.
    DeliveryCopy,
}

#[derive(Clone, Debug)]
pub struct RecordRec {
    pub key: Text,
    pub request_hash: Option<Text>,
    pub status: Text,
    pub response: Option<Text>,
    pub created: Timestamp,
    pub loc: Loc,
}

/// A gateway's line about a request it gave up on or sent again ([`crate::event::GatewayTry`]).
#[derive(Clone, Debug)]
pub struct GatewayTryRec {
    pub at: Timestamp,
    pub loc: Loc,
    pub shows: crate::event::GatewayTry,
}

/// A replay the service logged: the effect `effect_id` (of `kind`, where said), or an
/// answer stored under `key`, confirmed again to a request at `at`.
#[derive(Clone, Debug)]
pub struct ReplayRec {
    pub kind: Option<Text>,
    pub effect_id: Option<Text>,
    pub key: Option<Text>,
    pub at: Timestamp,
    pub loc: Loc,
}
