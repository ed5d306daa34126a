//! The note a finding's message ends with when lines of one of its effects disagree on the
//! effect's amount, order or key ([`crate::correlate::disputes`]).

use crate::correlate::Model;

/// `; rf_2's lines disagree on its amount (GBP 45.00 used; also EUR 45.00)` (and its order,
/// its key) for each of `effects` whose lines disagree on one ([`crate::correlate::disputes`]):
/// an excess counted in the amount used does not move currency unsaid, and an effect
/// counted under an order or key some of its lines do not give says so.
pub fn disputed_values(model: &Model, effects: &[usize]) -> String {
    let (amounts, orders, keys) = (
        &model.amount_disputes,
        &model.order_disputes,
        &model.key_disputes,
    );
    if amounts.is_empty() && orders.is_empty() && keys.is_empty() {
        return String::new();
    }
    let text = |field: &str, used: Option<String>, others: Vec<String>| {
        let used = used.unwrap_or_else(|| "none".to_string());
        format!("its {field} ({used} used; also {})", others.join(", "))
    };
    let mut out = String::new();
    for &i in effects {
        let e = &model.effects[i];
        let mut said = Vec::new();
        if let Some(d) = amounts.get(&(i as u32)) {
            let others = (d.others(e.written).iter()).map(|w| w.describe()).collect();
            said.push(text("amount", e.written.map(|w| w.describe()), others));
        }
        for (field, disputes, used) in [("order", orders, &e.order), ("key", keys, &e.key)] {
            if let Some(d) = disputes.get(&(i as u32)) {
                let others = (d.others(used.as_deref()).into_iter()).map(String::from);
                said.push(text(
                    field,
                    used.as_deref().map(String::from),
                    others.collect(),
                ));
            }
        }
        if !said.is_empty() {
            out.push_str(&format!(
                "; {}'s lines disagree on {}",
                e.id,
                said.join(" and ")
            ));
        }
    }
    out
}
