//! Ways to show a plan to a person or a program: a text table, one JSON object, and an
//! SVG memory map.

mod json;
mod svg;
mod table;

pub use json::{json, write_json_string};
pub use svg::svg;
pub use table::table;
