// Two models sharing one workspace, declared with `models { ... }`.
mod usmp {
    usmp_macros::usmp_pools! {
        pools {
            sram: workspace(align = 32, section = ".usmp.sram"),
            flash: constant(align = 4, section = ".usmp.flash"),
        }
        models {
            kws: model(path = "../../../../examples/models/kws.json", algorithm = "greedy_by_size", module = keyword),
            again: model(path = "../../../../examples/models/kws.json", io_in_pools = false, size_granularity = 4, alignment = 8,
                         scratch = [call(2, window = 64, align = 32)]),
        }
    }
}

fn main() {
    let need = |buffers: &[::usmp::Buffer]| {
        buffers.iter().filter(|b| b.pool == 0).map(|b| b.offset + b.size).max().unwrap()
    };
    assert_eq!(usmp::SRAM_SIZE, need(usmp::keyword::BUFFERS).max(need(usmp::again::BUFFERS)));
    // I/O left out of the pools: the accessors give nothing and the caller owns them.
    let mut ws = usmp::Workspace::take().unwrap();
    let mut again = usmp::again::Model::session(&mut ws);
    assert!(again.input(0).is_none());
    assert_eq!(again.inputs().next(), Some(None));
    assert_eq!(again.call(2).unwrap().scratch.get_mut(0).unwrap().len(), 64);
}
