//! The built-in algorithms by the names usmp.toml, `usmp_pools!` and the `usmp` command
//! use, and the one factory that builds each with the searching algorithms' options.

use std::fmt;
use std::str::FromStr;

use super::{
    Algorithm, Assignment, Auto, BestFit, Exact, FirstFit, FirstFitByClass, GreedyByBreadth,
    GreedyByConflicts, GreedyBySize, HillClimb,
};

/// A built-in algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Named {
    /// [`GreedyBySize`]: TVM's `greedy_by_size`.
    GreedyBySize,
    /// [`GreedyByConflicts`]: TVM's `greedy_by_conflicts`.
    GreedyByConflicts,
    /// [`FirstFit`]: TensorFlow Lite Micro's planner.
    FirstFit,
    /// [`BestFit`]: TensorFlow Lite's.
    BestFit,
    /// [`GreedyByBreadth`]: TensorFlow Lite's other order.
    GreedyByBreadth,
    /// [`FirstFitByClass`]: first fit by size class.
    FirstFitByClass,
    /// [`HillClimb`]: TVM's `hill_climb`, seeded.
    HillClimb,
    /// [`Exact`]: the search.
    Exact,
    /// [`Auto`]: the fast ones, then the search on the best.
    Auto,
}

impl Named {
    /// Every built-in algorithm, in the order the command lists them.
    pub const ALL: [Named; 9] = [
        Named::GreedyBySize,
        Named::GreedyByConflicts,
        Named::FirstFit,
        Named::BestFit,
        Named::GreedyByBreadth,
        Named::FirstFitByClass,
        Named::HillClimb,
        Named::Exact,
        Named::Auto,
    ];

    /// Its name, as written in usmp.toml and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Named::GreedyBySize => "greedy_by_size",
            Named::GreedyByConflicts => "greedy_by_conflicts",
            Named::FirstFit => "first_fit",
            Named::BestFit => "best_fit",
            Named::GreedyByBreadth => "greedy_by_breadth",
            Named::FirstFitByClass => "first_fit_by_class",
            Named::HillClimb => "hill_climb",
            Named::Exact => "exact",
            Named::Auto => "auto",
        }
    }

    /// The algorithm called `name`, if one is.
    pub fn from_name(name: &str) -> Option<Named> {
        Named::ALL.into_iter().find(|n| n.name() == name)
    }

    /// Whether it searches (exact and auto), and so takes [`Exact`]'s options: a pool
    /// [`Assignment`], a work budget, a time limit.
    pub fn searches(self) -> bool {
        matches!(self, Named::Exact | Named::Auto)
    }

    /// Every name, joined for a message: `greedy_by_size, ..., auto`.
    pub fn names() -> String {
        Named::ALL.map(Named::name).join(", ")
    }

    /// The algorithm with default options.
    pub fn build(self) -> Box<dyn Algorithm + Send + Sync> {
        self.with(Exact::default())
    }

    /// The algorithm, a searching one with `search`'s options (the others have none).
    pub fn with(self, search: Exact) -> Box<dyn Algorithm + Send + Sync> {
        match self {
            Named::GreedyBySize => Box::new(GreedyBySize),
            Named::GreedyByConflicts => Box::new(GreedyByConflicts),
            Named::FirstFit => Box::new(FirstFit),
            Named::BestFit => Box::new(BestFit),
            Named::GreedyByBreadth => Box::new(GreedyByBreadth),
            Named::FirstFitByClass => Box::new(FirstFitByClass::default()),
            Named::HillClimb => Box::new(HillClimb::default()),
            Named::Exact => Box::new(search),
            Named::Auto => Box::new(Auto { exact: search }),
        }
    }
}

impl fmt::Display for Named {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no built-in algorithm or assignment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownName {
    /// What was written.
    pub name: String,
    /// What may be written instead, joined with commas.
    pub expected: String,
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown name `{}`; use one of: {}",
            self.name, self.expected
        )
    }
}

impl std::error::Error for UnknownName {}

impl FromStr for Named {
    type Err = UnknownName;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Named::from_name(s).ok_or_else(|| UnknownName {
            name: s.to_string(),
            expected: Named::names(),
        })
    }
}

impl Assignment {
    /// Every assignment, the default first.
    pub const ALL: [Assignment; 3] = [
        Assignment::Preference,
        Assignment::SmallestTotal,
        Assignment::Fastest,
    ];

    /// Its name, as written in usmp.toml and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Assignment::Preference => "preference",
            Assignment::SmallestTotal => "smallest_total",
            Assignment::Fastest => "fastest",
        }
    }
}

impl FromStr for Assignment {
    type Err = UnknownName;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Assignment::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| UnknownName {
                name: s.to_string(),
                expected: Assignment::ALL.map(Assignment::name).join(", "),
            })
    }
}

impl fmt::Display for Assignment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_and_builds_the_algorithm_of_that_name() {
        for named in Named::ALL {
            assert_eq!(named.name().parse::<Named>(), Ok(named));
            assert_eq!(named.build().name(), named.name());
        }
        for a in Assignment::ALL {
            assert_eq!(a.name().parse::<Assignment>(), Ok(a));
        }
        let e = "fist_fit".parse::<Named>().unwrap_err();
        assert!(e.to_string().contains("`fist_fit`") && e.to_string().contains("first_fit, "));
    }
}
