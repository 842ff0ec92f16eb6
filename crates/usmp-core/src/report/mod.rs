//! Ways to show a plan to a person or a program: a text table, one JSON object, and an
//! SVG memory map; for models also the per-step liveness.

mod json;
mod liveness;
mod order;
mod svg;
mod table;
mod traffic;

pub use json::{json, write_json_string};
pub use liveness::{liveness, model_json};
pub use order::order;
pub use svg::{svg, svg_steps};
pub use table::table;
pub use traffic::{micros, traffic_table};
