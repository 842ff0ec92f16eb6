//! `usmp plan model.tflite --write-tflm planned.tflite`: a copy of the model carrying a
//! verified offline plan that TensorFlow Lite Micro uses instead of planning at run time.

use std::path::Path;

use usmp_core::Algorithm;
use usmp_core::liveness::{CallSelector, ScratchRule};
use usmp_core::model::{Scratch, Size};
use usmp_core::report;
use usmp_core::tflite::{
    OFFLINE_PLAN_METADATA, TflmError, TflmScratch, plan_for_tflm, scratch_for_tflm,
};

use crate::{Failure, Format, emit, write_file, write_svg};

/// Where and how the command reports.
pub(crate) struct Output<'a> {
    /// The planned copy of the model.
    pub file: &'a Path,
    pub format: Format,
    pub svg: Option<&'a Path>,
}

/// Reads a `--scratch` value: `OP=SIZE` or `CALL=SIZE`.
pub(crate) fn scratch_rule(text: &str) -> Result<ScratchRule, String> {
    let Some((calls, size)) = text.split_once('=') else {
        return Err("write OP=SIZE or CALL=SIZE, e.g. SVDF=512 or 3=\"1 KiB\"".into());
    };
    let calls = calls.trim();
    if calls.is_empty() {
        return Err("name an operator or a call number before '=', e.g. SVDF=512".into());
    }
    let bytes = usmp_core::input::parse_size(size.trim())?;
    let calls = match calls.parse::<usize>() {
        Ok(i) => CallSelector::Index(i),
        Err(_) => CallSelector::Operator(calls.to_string()),
    };
    Ok(ScratchRule {
        calls,
        scratch: Scratch {
            name: format!("scratch={}", text.trim()),
            size: Size::Bytes(bytes),
            alignment: None,
        },
    })
}

/// Plans `file` for TFLite Micro's arena and writes the planned copy.
pub(crate) fn write(
    file: &Path,
    algorithm: &dyn Algorithm,
    scratch: &[ScratchRule],
    to: Output<'_>,
) -> Result<(), Failure> {
    let Output {
        file: out,
        format,
        svg,
    } = to;
    let shown = file.display();
    if usmp_core::file::same(file, out) {
        return Err(Failure::Input(format!(
            "--write-tflm {}: that is the input model; usmp never modifies its input, so \
             name another file, e.g. --write-tflm planned.tflite",
            out.display()
        )));
    }
    let bytes = usmp_core::file::read(file)
        .map_err(|e| Failure::Input(format!("{shown}: cannot read the file: {e}")))?;
    let name = file
        .file_stem()
        .map_or_else(|| "model".into(), |s| s.to_string_lossy().into_owned());
    // Without --scratch: what TFLite Micro's reference kernels request, from the shapes.
    let (rules, assumed) = scratch_for_tflm(&bytes, scratch);
    let scratch = unique_names(&rules);
    let planned = plan_for_tflm(&bytes, &name, algorithm, &scratch).map_err(|e| match e {
        TflmError::Plan(e) => Failure::NoPlan(format!("{shown}: {e}")),
        TflmError::Tflite(usmp_core::tflite::TfliteError::NotTflite { .. }) => {
            Failure::Input(format!("{shown}: --write-tflm needs a .tflite model: {e}"))
        }
        e => Failure::Input(format!("{shown}: {e}")),
    })?;
    if planned.written.replaced {
        eprintln!(
            "warning: {shown} already held an offline plan ({OFFLINE_PLAN_METADATA} \
             metadata); the copy holds the new plan instead"
        );
    }
    write_file(out, "the model", &planned.written.bytes)?;

    let scratch_note = scratch_note(&assumed, scratch.is_empty());
    let summary = format!(
        "wrote {}: a TensorFlow Lite Micro offline plan ({OFFLINE_PLAN_METADATA}) for {} of \
         {} tensors, the rest planned at run time (constants, variables, unused)\n\
         arena head: {} bytes{scratch_note}; TFLite Micro adds its persistent tail\n",
        out.display(),
        planned.planned(),
        planned.offline.offsets.len(),
        planned.head,
    );
    let (model, liveness, plan) = (&planned.model, &planned.liveness, &planned.plan);
    match format {
        Format::Table => emit(&format!(
            "{}\n{}\n{summary}",
            report::liveness(model, liveness, plan),
            report::table(&liveness.problem, plan)
        )),
        Format::Json => {
            emit(&(report::model_json(model, liveness, plan) + "\n"));
            eprint!("{summary}");
        }
    }
    write_svg(svg, || {
        report::svg_steps(&liveness.problem, plan, &liveness.steps)
    })
}

/// What the summary says of the scratch the plan holds: TFLite Micro's reference
/// kernels' requests (`assumed`), none, or the --scratch rules.
fn scratch_note(assumed: &[TflmScratch], no_rules: bool) -> String {
    if !assumed.is_empty() {
        format!(
            ", with the scratch TFLite Micro's reference kernels request where it will place \
             it ({}; other kernels, such as CMSIS-NN's, request other sizes: give those with \
             --scratch)",
            assumed_list(assumed)
        )
    } else if no_rules {
        "; no call requests scratch from TFLite Micro's reference kernels (other kernels may: \
         give theirs with --scratch)"
            .to_string()
    } else {
        ", with the --scratch buffers where TFLite Micro will place them".to_string()
    }
}

/// `call 1 SVDF 256 + 256, call 3 SVDF 256 + 256`: the assumed scratch, per call.
fn assumed_list(assumed: &[TflmScratch]) -> String {
    let mut calls: Vec<(usize, &str, Vec<String>)> = Vec::new();
    for s in assumed {
        match calls.last_mut() {
            Some((call, _, sizes)) if *call == s.call => sizes.push(s.bytes.to_string()),
            _ => calls.push((s.call, &s.op, vec![s.bytes.to_string()])),
        }
    }
    let listed: Vec<String> = calls
        .iter()
        .map(|(call, op, sizes)| format!("call {call} {op} {}", sizes.join(" + ")))
        .collect();
    format!("{} bytes", listed.join(", "))
}

/// The rules with names unique within each call: the same rule given twice is two
/// buffers, as two requests of one kernel are.
fn unique_names(rules: &[ScratchRule]) -> Vec<ScratchRule> {
    rules
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let mut r = r.clone();
            r.scratch.name = format!("{} #{}", r.scratch.name, k + 1);
            r
        })
        .collect()
}
