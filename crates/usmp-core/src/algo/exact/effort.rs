//! The work a search may do: counted, so that plans do not depend on the machine.

use std::time::Instant;

/// The effort all searches of one run may spend: a deterministic count of work (items
/// examined), and for the command only, a wall-clock deadline.
#[derive(Debug)]
pub(crate) struct Effort {
    pub(crate) spent: u64,
    pub(crate) limit: u64,
    pub(crate) deadline: Option<Instant>,
    checks: u32,
    expired: bool,
}

impl Effort {
    pub(crate) fn new(limit: u64, deadline: Option<Instant>) -> Self {
        Effort {
            spent: 0,
            limit,
            deadline,
            checks: 0,
            expired: false,
        }
    }

    /// Spends `units`; false once the budget or the deadline is past.
    pub(crate) fn spend(&mut self, units: u64) -> bool {
        self.spent = self.spent.saturating_add(units);
        if self.exhausted() {
            return false;
        }
        // Reading the clock every node would cost more than some nodes do.
        self.checks = self.checks.wrapping_add(1);
        if self.checks.is_multiple_of(256) && self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.expired = true;
        }
        !self.expired
    }

    pub(crate) fn exhausted(&self) -> bool {
        self.spent > self.limit || self.expired
    }
}
