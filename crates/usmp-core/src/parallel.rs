//! Two pieces of independent work on two threads.
//!
//! The planner splits large problems into two halves in several places (the orders and
//! the layout, the peak's two sorts, the verifier's halves, the placement's halves of
//! time); each gives the same result on one thread or two, so only the time changes.

/// Runs `a` on a scoped thread of its own and `b` on this one, and returns both results.
/// A panic in `a` is resumed here, as if `a` had run on this thread.
pub(crate) fn join<A: Send, B>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B) -> (A, B) {
    std::thread::scope(|scope| {
        let handle = scope.spawn(a);
        let b = b();
        match handle.join() {
            Ok(a) => (a, b),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}
