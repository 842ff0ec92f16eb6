// A model written breadth first, its calls run in the order of the lowest peak
// (`order = "memory"`): the session hands the calls out in that order, and the workspace
// is that order's peak.
mod usmp {
    usmp_macros::usmp_pools! {
        model = "../../../../examples/models/multiscale.json",
        order = "memory",
        pools {
            sram: workspace(align = 16),
            flash: constant(align = 16),
        }
    }
}

fn main() {
    let mut ws = usmp::Workspace::take().unwrap();
    let mut model = usmp::multiscale::Model::session(&mut ws);
    // As written the 3x3 convolution runs first; in this order the 5x5 one does.
    assert_eq!(model.call(0).unwrap().op(), ::usmp::Op::Named("conv_5x5"));
    assert_eq!(model.call(2).unwrap().op(), ::usmp::Op::Named("conv_3x3"));
    assert_eq!(usmp::POOLS[0].size, 34_816);
}
