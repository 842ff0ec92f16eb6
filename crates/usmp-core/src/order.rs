//! Memory-aware operator order: among the orders a model's data dependencies allow, one
//! whose peak of live bytes is lowest.
//!
//! A model's calls come in the order its author or converter wrote them, and that order
//! decides which tensors are live together: in a graph that branches, running one branch
//! to its end before starting the next can free its tensors sooner. With outputs written
//! over the inputs they consume ([`Overlap`](crate::model::Overlap)) the order also
//! decides which call reads a tensor last, and so which pairs may share bytes at all.
//!
//! [`memory_order`] searches the orders a layer of calls at a time. The peak of an order
//! is the most bytes its buffers have live at one call (tensors, their in-place groups,
//! scratch and state, sizes as planned) less, at each call, the bytes its pair may share
//! when the call is its input's last reader in that order: the lower bound
//! ([`LowerBound`](crate::LowerBound)) of the model's problem in one pool, which a test
//! checks over random models and orders. The bytes live once a set of calls has run
//! depend on the set alone, not on the order it ran in, so keeping per set of calls the
//! order with the lowest peak so far finds the lowest peak of all orders: a dynamic
//! program over the sets each layer reaches. A graph whose layers hold more sets than
//! [`MOST_SETS`] keeps the sets with the lowest peaks (a beam search, no longer exact);
//! the bound of the work is fixed, never a clock, so the order is the same on every
//! machine. The order as written wins every tie, so a model that cannot do better keeps
//! it.
//!
//! What an order must keep: every tensor written before it is read; an output written in
//! place ([`InPlace`](crate::model::InPlace)) after every other reader of the input it
//! overwrites; and the written order among the calls that touch state or write nothing,
//! whose effects the tensors do not show.

use crate::liveness::{self, CallSelector, Options, Origin};
use crate::model::{Model, ModelError, Role};
use crate::problem::{self, Pool, PoolKind};

mod search;
#[cfg(test)]
mod tests;

/// The most sets of calls the search keeps after each layer (each set the calls run so
/// far, with the best order found to run them), for models of up to 64 calls; larger
/// ones keep fewer in proportion (never under 32), so the work stays about linear in
/// calls. Beyond it the sets with the lowest peaks stay and the result is no longer
/// proven the lowest.
pub const MOST_SETS: usize = 2048;

/// A model's calls in a memory-aware order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Order {
    /// The calls in the chosen order, each its index in the model as written.
    pub calls: Vec<usize>,
    /// The peak (see the [module docs](self)) of the order as written.
    pub written: u64,
    /// The peak of the chosen order: at most `written`.
    pub peak: u64,
    /// Whether the search kept every set of calls, so no order has a lower peak.
    pub exact: bool,
}

impl Order {
    /// Whether the chosen order is the order as written.
    pub fn is_written(&self) -> bool {
        self.calls.iter().enumerate().all(|(k, &c)| k == c)
    }

    /// Where call `call` (its index as written) runs in the chosen order.
    pub fn position(&self, call: usize) -> Option<usize> {
        self.calls.iter().position(|&c| c == call)
    }

    /// `model` with its calls in this order. Its declared overlaps go with their calls;
    /// those the new order refuses (the call no longer reads its input last) are dropped.
    pub fn apply(&self, model: &Model) -> Model {
        let mut reordered = Model {
            calls: self
                .calls
                .iter()
                .filter_map(|&c| model.calls.get(c).cloned())
                .collect(),
            ..model.clone()
        };
        reordered.drop_refused_overlaps();
        reordered
    }

    /// `options` with every scratch rule that names a call by its index as written
    /// naming the same call in this order.
    pub fn renumber(&self, options: &Options) -> Options {
        let mut options = options.clone();
        for rule in &mut options.scratch {
            if let CallSelector::Index(i) = rule.calls
                && let Some(p) = self.position(i)
            {
                rule.calls = CallSelector::Index(p);
            }
        }
        options
    }
}

/// The order of `model`'s calls with the lowest peak the search finds, the buffers
/// sized as `options` plans them. The calls' declared overlaps count as candidates: a
/// pair lowers the peak of an order where its call reads the input last, and the model
/// need not allow it in the order as written (see [`Order::apply`]).
///
/// Errors are the model's as [`liveness::analyse`] reports them (the model without its
/// overlaps must be a program as written), and an overlap no order can allow
/// ([`Model::overlap_refused_in_every_order`]).
pub fn memory_order(model: &Model, options: &Options) -> Result<Order, ModelError> {
    let graph = Graph::of(model, options)?;
    let written = graph.peak_of(&(0..model.calls.len()).collect::<Vec<_>>());
    let found = search::lowest(&graph);
    Ok(match found {
        Some((calls, peak, exact)) if peak < written => Order {
            calls,
            written,
            peak,
            exact,
        },
        found => Order {
            calls: (0..model.calls.len()).collect(),
            written,
            peak: written,
            exact: found.is_some_and(|(_, _, exact)| exact),
        },
    })
}

/// One planned buffer as the search sees it.
#[derive(Clone, Debug)]
struct Unit {
    size: u64,
    /// The call that writes it first; `None` when it is live from the start.
    born_by: Option<usize>,
    /// The calls that write or read it: it is live until all of them have run.
    users: Vec<usize>,
    /// Live to the end whatever runs (a model output, state, an unused model input).
    forever: bool,
}

/// What the search needs of a model: its buffers, what each call needs run first, and
/// the bytes each call's pairs may share.
#[derive(Clone, Debug)]
struct Graph {
    units: Vec<Unit>,
    /// Per call, the calls that must run before it.
    before: Vec<Vec<usize>>,
    /// Per call, the calls that wait for it.
    after: Vec<Vec<usize>>,
    /// Per call, the bytes of the units it writes first (its outputs and scratch).
    born: Vec<u64>,
    /// Per call, the units it uses that end at some call.
    uses: Vec<Vec<usize>>,
    /// Per call, its candidate pairs: the input's unit and the bytes they may share.
    credits: Vec<Vec<(usize, u64)>>,
}

impl Graph {
    fn of(model: &Model, options: &Options) -> Result<Graph, ModelError> {
        // The buffers as planning makes them, from the model without its overlaps (which
        // may hold only in other orders); one pool of each kind holds everything.
        let bare = Model {
            calls: (model.calls.iter())
                .map(|c| crate::model::Call {
                    overlaps: Vec::new(),
                    ..c.clone()
                })
                .collect(),
            ..model.clone()
        };
        let pools = [Pool::workspace("order"), Pool::constant("constants")];
        let lowered = liveness::analyse(&bare, &pools, options)?;
        let (producers, n) = (model.producers(), model.calls.len());
        let mut readers: Vec<Vec<usize>> = vec![Vec::new(); model.tensors.len()];
        for (i, call) in model.calls.iter().enumerate() {
            for &t in &call.reads {
                readers[t].push(i);
            }
        }
        let buffers = lowered.problem.buffers();
        let units = units(model, &lowered, &producers, &readers);
        // Units by the buffer index planning gave them (constants are left out).
        let mut unit_of = vec![None; buffers.len()];
        let workspace = (0..buffers.len()).filter(|&b| buffers[b].kind == PoolKind::Workspace);
        for (u, b) in workspace.enumerate() {
            unit_of[b] = Some(u);
        }
        let tensor_unit = |t: usize| {
            lowered
                .tensor_buffers
                .get(t)
                .copied()
                .flatten()
                .and_then(|b| unit_of[b])
        };
        let (mut born, mut uses) = (vec![0u64; n], vec![Vec::new(); n]);
        for (u, unit) in units.iter().enumerate() {
            if let Some(c) = unit.born_by {
                born[c] = born[c].saturating_add(unit.size);
            }
            if !unit.forever {
                for &c in &unit.users {
                    uses[c].push(u);
                }
            }
        }
        let credits = credits(model, &units, tensor_unit)?;
        let before = dependencies(model, &producers, &readers);
        let mut after = vec![Vec::new(); n];
        for (c, list) in before.iter().enumerate() {
            for &b in list {
                after[b].push(c);
            }
        }
        Ok(Graph {
            before,
            after,
            units,
            born,
            uses,
            credits,
        })
    }

    /// The peak of running the calls in `order` (every call once).
    fn peak_of(&self, order: &[usize]) -> u64 {
        let mut run = search::Run::new(self);
        order.iter().fold(0, |peak, &c| peak.max(run.call(c)))
    }
}

/// The workspace buffers planning makes of `model`, in its order, as the search sees them.
fn units(
    model: &Model,
    lowered: &liveness::Liveness,
    producers: &[Option<usize>],
    readers: &[Vec<usize>],
) -> Vec<Unit> {
    let buffers = lowered.problem.buffers();
    (lowered.origins.iter().zip(buffers))
        .filter(|(_, b)| b.kind == PoolKind::Workspace)
        .map(|(origin, b)| match origin {
            Origin::Scratch { call, .. } => Unit {
                size: b.size,
                born_by: Some(*call),
                users: vec![*call],
                forever: false,
            },
            Origin::Tensors(members) => {
                let mut users: Vec<usize> = (members.iter())
                    .flat_map(|&t| readers[t].iter().copied().chain(producers[t]))
                    .collect();
                users.sort_unstable();
                users.dedup();
                let from_start = |t: usize| producers[t].is_none() || model.inputs.contains(&t);
                let forever = members.iter().any(|&t| {
                    model.outputs.contains(&t)
                        || model.tensors[t].role == Role::State
                        || (producers[t].is_none() && readers[t].is_empty())
                });
                Unit {
                    size: b.size,
                    born_by: match members.iter().any(|&t| from_start(t)) {
                        true => None,
                        false => members.first().and_then(|&t| producers[t]),
                    },
                    users,
                    forever,
                }
            }
        })
        .collect()
}

/// Per call, the pairs it declares that some order allows: the input's unit and the
/// bytes the pair may share. A pair no order allows is the model's error.
fn credits(
    model: &Model,
    units: &[Unit],
    tensor_unit: impl Fn(usize) -> Option<usize>,
) -> Result<Vec<Vec<(usize, u64)>>, ModelError> {
    for (i, call) in model.calls.iter().enumerate() {
        if let Some(e) =
            (0..call.overlaps.len()).find_map(|k| model.overlap_refused_in_every_order(i, k))
        {
            return Err(e);
        }
    }
    let credits = (0..model.calls.len())
        .map(|i| {
            let overlaps = &model.calls[i].overlaps;
            (0..overlaps.len())
                .filter_map(|k| {
                    let o = overlaps[k];
                    let (out, inp) = (tensor_unit(o.output)?, tensor_unit(o.input)?);
                    let pair = problem::Overlap {
                        output: out,
                        input: inp,
                        shifts: o.shifts,
                    };
                    Some((inp, pair.most_shared(units[out].size, units[inp].size)))
                })
                .collect()
        })
        .collect();
    Ok(credits)
}

/// Per call, the calls that must run before it (see the [module docs](self)).
fn dependencies(
    model: &Model,
    producers: &[Option<usize>],
    readers: &[Vec<usize>],
) -> Vec<Vec<usize>> {
    let mut before: Vec<Vec<usize>> = vec![Vec::new(); model.calls.len()];
    // Calls with effects the tensors do not show keep their order among themselves.
    let mut effect: Option<usize> = None;
    for (i, call) in model.calls.iter().enumerate() {
        before[i].extend(
            call.reads
                .iter()
                .filter_map(|&t| producers[t])
                .filter(|&p| p != i),
        );
        for ip in &call.in_place {
            before[i].extend(readers[ip.input].iter().copied().filter(|&r| r != i));
        }
        let touches_state =
            (call.reads.iter().chain(&call.writes)).any(|&t| model.tensors[t].role == Role::State);
        if touches_state || call.writes.is_empty() {
            before[i].extend(effect);
            effect = Some(i);
        }
        before[i].sort_unstable();
        before[i].dedup();
    }
    before
}
