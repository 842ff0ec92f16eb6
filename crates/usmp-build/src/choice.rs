//! The choices a model makes by name, typed once: its algorithm (built in, or the build
//! script's own, registered with [`Config::algorithm`](crate::Config::algorithm)) and how
//! the searching algorithms assign pools. Both front ends read names into these; the
//! planner builds the algorithm from them through one factory.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use usmp_core::{Algorithm, Assignment, Exact, Named};

/// A model's algorithm.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AlgorithmChoice {
    /// A built-in algorithm.
    BuiltIn(Named),
    /// A name that is no built-in one: the build script's own algorithm, if it registered
    /// one by this name (validation says so otherwise).
    Own(String),
}

impl AlgorithmChoice {
    /// The choice `name` makes.
    pub fn from_name(name: &str) -> AlgorithmChoice {
        Named::from_name(name).map_or_else(
            || AlgorithmChoice::Own(name.to_string()),
            AlgorithmChoice::BuiltIn,
        )
    }

    /// The name as written.
    pub fn name(&self) -> &str {
        match self {
            AlgorithmChoice::BuiltIn(n) => n.name(),
            AlgorithmChoice::Own(name) => name,
        }
    }

    /// Whether it takes an [`Assignment`] (the built-in searching algorithms).
    pub fn searches(&self) -> bool {
        matches!(self, AlgorithmChoice::BuiltIn(n) if n.searches())
    }
}

impl Default for AlgorithmChoice {
    fn default() -> Self {
        AlgorithmChoice::BuiltIn(Named::Auto)
    }
}

impl fmt::Display for AlgorithmChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The work budget of `exact` and `auto` in a build (units of the search's work, as
/// [`Exact::work_budget`] counts them): half a million, a 600th of the command's default
/// (a 200th of the 100 million it had before its dives), so that a model whose plan
/// misses the lower bound does not hold a build up. Build scripts are compiled without
/// optimisation by default: a 1,000-call chain whose plan misses its bound spent 186 s of
/// a debug build script with the command's budget of then. `usmp plan` keeps the full
/// budget; [`Config::work_budget`](crate::Config::work_budget) sets another.
pub const BUILD_WORK_BUDGET: u64 = 500_000;

/// The algorithms a build plans with: the build script's own, by the name a model gives
/// in `algorithm = "..."`, and the work budget of the built-in searching ones.
#[derive(Clone)]
pub struct OwnAlgorithms {
    own: BTreeMap<String, Arc<dyn Algorithm + Send + Sync>>,
    work_budget: u64,
}

impl Default for OwnAlgorithms {
    fn default() -> Self {
        OwnAlgorithms {
            own: BTreeMap::new(),
            work_budget: BUILD_WORK_BUDGET,
        }
    }
}

impl OwnAlgorithms {
    /// Registers `algorithm` under `name`, replacing one registered before.
    pub fn insert(&mut self, name: &str, algorithm: Arc<dyn Algorithm + Send + Sync>) {
        self.own.insert(name.to_string(), algorithm);
    }

    /// Whether one is registered under `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.own.contains_key(name)
    }

    /// Sets the work budget of the built-in searching algorithms.
    pub fn set_work_budget(&mut self, units: u64) {
        self.work_budget = units;
    }

    /// The work budget of the built-in searching algorithms.
    pub fn work_budget(&self) -> u64 {
        self.work_budget
    }

    /// The registered names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.own.keys().map(String::as_str)
    }

    /// The algorithm `choice` names, the searching ones with `assignment`; `None` for an
    /// own name nothing was registered under (validation reports it first).
    pub fn build(
        &self,
        choice: &AlgorithmChoice,
        assignment: Assignment,
    ) -> Option<Arc<dyn Algorithm + Send + Sync>> {
        match choice {
            AlgorithmChoice::BuiltIn(named) => Some(Arc::from(named.with(Exact {
                assignment,
                work_budget: self.work_budget,
                ..Exact::default()
            }))),
            AlgorithmChoice::Own(name) => self.own.get(name).cloned(),
        }
    }
}

impl fmt::Debug for OwnAlgorithms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnAlgorithms")
            .field("own", &self.own.keys().collect::<Vec<_>>())
            .field("work_budget", &self.work_budget)
            .finish()
    }
}
