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

/// The build script's own algorithms, by the name a model gives in `algorithm = "..."`.
#[derive(Clone, Default)]
pub struct OwnAlgorithms(BTreeMap<String, Arc<dyn Algorithm + Send + Sync>>);

impl OwnAlgorithms {
    /// Registers `algorithm` under `name`, replacing one registered before.
    pub fn insert(&mut self, name: &str, algorithm: Arc<dyn Algorithm + Send + Sync>) {
        self.0.insert(name.to_string(), algorithm);
    }

    /// Whether one is registered under `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// The registered names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
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
                ..Exact::default()
            }))),
            AlgorithmChoice::Own(name) => self.0.get(name).cloned(),
        }
    }
}

impl fmt::Debug for OwnAlgorithms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.keys()).finish()
    }
}
