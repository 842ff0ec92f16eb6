// The kws example model planned inline into DTCM, SRAM and flash; run on the host.
mod usmp {
    usmp_macros::usmp_pools! {
        model = "../../../../examples/models/kws.json",
        algorithm = "auto",
        scratch = [op("maxpool", window = 64)],
        pools {
            dtcm:  workspace(size = 8 KiB, align = 16, section = ".usmp.dtcm", targets = ["cpu"]),
            sram:  workspace(align = 16, section = ".usmp.sram", targets = ["cpu", "npu"]),
            flash: constant(section = ".usmp.flash"),
        }
    }
}

fn main() {
    let mut ws = usmp::Workspace::take().unwrap();
    assert!(usmp::Workspace::take().is_none());
    assert_eq!(usmp::POOLS.len(), 3);
    assert_eq!(usmp::kws::constant(&usmp::kws::BIAS)[..4], [1, 0, 255, 7]);
    let mut kws = usmp::kws::Model::new(&mut ws);
    kws.inputs()[0].fill(9);
    let call = kws.call(0).unwrap();
    assert_eq!(call.op, "conv2d");
    assert!(call.inputs[0].iter().all(|&b| b == 9));
    assert_eq!(call.scratch[0].len(), 1024);
    assert_eq!(kws.call(2).unwrap().scratch[0].len(), 64);
}
