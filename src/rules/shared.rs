//! What several rules derive alike from the model, computed once per scan by the first rule
//! that asks for it: rules run in parallel, so another rule asking meanwhile waits for that
//! result rather than computing it again.

use super::Settings;
use super::support::{ServiceGroup, ServiceKeys, service_only_groups};
use crate::correlate::Model;
use crate::metrics::{Keyed, classify};
use crate::time::Duration;
use std::sync::OnceLock;

pub struct Shared<'m> {
    model: &'m Model,
    max_skew: Duration,
    service_only: OnceLock<Vec<ServiceGroup>>,
    keyed: OnceLock<Vec<Keyed>>,
    service_keys: OnceLock<ServiceKeys>,
}

impl<'m> Shared<'m> {
    /// Nothing is computed until a rule asks.
    pub fn new(model: &'m Model, settings: &Settings) -> Self {
        Shared {
            model,
            max_skew: settings.max_skew,
            service_only: OnceLock::new(),
            keyed: OnceLock::new(),
            service_keys: OnceLock::new(),
        }
    }

    /// The model's [`service_only_groups`]: `duplicate-effect` reports them and
    /// `duplicate-decision` counts each as one decision.
    pub fn service_only_groups(&self) -> &[ServiceGroup] {
        self.service_only
            .get_or_init(|| service_only_groups(self.model, self.max_skew))
    }

    /// Every keyed attempt, [`classify`]'d: `replay-rate-spike` reads its windows and the
    /// report's metrics its totals. Classified once, its tables are built once.
    pub fn keyed(&self) -> &[Keyed] {
        self.keyed.get_or_init(|| classify(self.model))
    }

    /// The keys the service logged on the effects of attempts whose lines show none:
    /// `key-per-attempt` and `unkeyed-retry` read an attempt's key from them.
    pub fn service_keys(&self) -> &ServiceKeys {
        self.service_keys
            .get_or_init(|| ServiceKeys::of(self.model))
    }
}
