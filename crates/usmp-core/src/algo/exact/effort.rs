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

    /// Runs `work` on this effort with at most `units` more to spend (or what is left,
    /// if less); returns its result and what it spent.
    pub(crate) fn capped<R>(
        &mut self,
        units: u64,
        work: impl FnOnce(&mut Effort) -> R,
    ) -> (R, u64) {
        let (limit, before) = (self.limit, self.spent);
        self.limit = limit.min(before.saturating_add(units));
        let result = work(self);
        self.limit = limit;
        (result, self.spent - before)
    }

    /// The units not yet spent.
    pub(crate) fn left(&self) -> u64 {
        self.limit.saturating_sub(self.spent)
    }

    /// `num / den` of the time left before the deadline, as a deadline of its own.
    pub(crate) fn deadline_part(&self, num: u32, den: u32) -> Option<Instant> {
        let now = Instant::now();
        self.deadline
            .map(|d| now + d.saturating_duration_since(now) / den * num)
    }

    /// An effort of `num / den` of what this one has left, in units and in time: spend
    /// it, then [`Effort::absorb`] it back.
    pub(crate) fn part(&self, num: u32, den: u32) -> Effort {
        let mut part = Effort::new(
            self.spent
                .saturating_add(self.left() / u64::from(den) * u64::from(num)),
            self.deadline_part(num, den),
        );
        part.spent = self.spent;
        part
    }

    /// Counts what `part` (from [`Effort::part`]) spent as spent here.
    pub(crate) fn absorb(&mut self, part: &Effort) {
        self.spend(part.spent.saturating_sub(self.spent));
    }

    pub(crate) fn exhausted(&self) -> bool {
        self.spent > self.limit || self.expired
    }
}
