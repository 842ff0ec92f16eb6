//! The call order a model runs in, when usmp chose it (`order = "memory"`).

use crate::order::Order;

/// Two lines: the peaks of the order as written and of the chosen one, and the chosen
/// order by each call's index as written.
pub fn order(order: &Order) -> String {
    let how = match order.exact {
        true => "no order of the calls has a lower peak",
        false => "the search kept the best sets of calls: a lower peak is not ruled out",
    };
    if order.is_written() {
        return format!(
            "call order: memory: the order as written has the lowest peak found, {} bytes \
             ({how})\n",
            order.peak
        );
    }
    let calls: Vec<String> = order.calls.iter().map(|c| c.to_string()).collect();
    format!(
        "call order: memory: peak {} bytes as written, {} in this order ({how})\n  \
         the calls as written, in the order they run: {}\n",
        order.written,
        order.peak,
        calls.join(", ")
    )
}
