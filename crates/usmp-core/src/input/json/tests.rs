use super::*;

#[test]
fn parses_nested_values_with_positions() {
    let j = parse("{\n  \"a\": [1, -2.5e3, \"x\\n\\u00e9\\ud83d\\ude00\"],\n  \"b\": {\"c\": null, \"d\": true}\n}", "t.json").unwrap();
    let Value::Object(entries) = &j.value else {
        panic!()
    };
    assert_eq!(&*entries[0].0, "a");
    assert_eq!(entries[0].1, Pos { line: 2, column: 3 });
    let Value::Array(items) = &entries[0].2.value else {
        panic!()
    };
    assert_eq!(items[1].value, Value::Number(Number::Text("-2.5e3".into())));
    assert_eq!(items[0].value, Value::Number(Number::Whole(1)));
    assert_eq!(items[2].value, Value::String("x\né😀".into()));
    assert_eq!(
        items[2].pos,
        Pos {
            line: 2,
            column: 20
        }
    );
    assert_eq!(entries[1].1, Pos { line: 3, column: 3 });
}

#[test]
fn errors_name_file_line_and_column() {
    let e = parse("{\"a\": 1,\n \"a\": 2}", "f.json").unwrap_err();
    assert_eq!(
        e.to_string(),
        "f.json:2:2: key \"a\" appears twice in this object"
    );
    let e = parse("[1, 2", "f.json").unwrap_err();
    assert_eq!(
        e.to_string(),
        "f.json:1:6: expected ',' or ']' in the array"
    );
    let e = parse("{'a': 1}", "f.json").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("f.json:1:2: expected a key in double quotes"),
        "{e}"
    );
    assert!(
        parse(&"[".repeat(1000), "deep.json")
            .unwrap_err()
            .to_string()
            .contains("nesting")
    );
    assert!(parse("\"\\ud800\"", "s.json").is_err());
    // Columns count characters, continued from one position to the next on one long
    // line, and start again on the next line.
    let long = format!("[\"é\", {}\"ü\", x]", "1, ".repeat(10_000));
    let e = parse(&long, "l.json").unwrap_err();
    // `x` is at byte find(", x]") + 2; "é" and "ü" before it are 2 bytes, 1 character.
    let x_byte = long.find(", x]").unwrap() + 2;
    let column = x_byte - 2 + 1;
    assert!(
        e.to_string()
            .starts_with(&format!("l.json:1:{column}: expected a JSON value")),
        "{e}"
    );
    let v = parse("[\"ü\",\n \"é\", 7]", "m.json").unwrap();
    let Value::Array(items) = v.value else {
        panic!("an array")
    };
    assert_eq!(items[1].pos, Pos { line: 2, column: 2 });
    assert_eq!(items[2].pos, Pos { line: 2, column: 7 });
    assert!(parse("1 2", "s.json").is_err());
    assert!(parse("", "s.json").is_err());
}

/// Keys are read once and shared; inline data comes back as bytes, and an array that
/// is not all bytes is read again as values, positions intact.
#[test]
fn keys_are_shared_and_data_is_kept_as_bytes() {
    let j = parse(
        r#"[{"name": "a", "data": [1, 2, 255]}, {"name": "b", "data": [1, 256]}]"#,
        "t.json",
    )
    .unwrap();
    let Value::Array(items) = &j.value else {
        panic!()
    };
    let entries = |k: usize| match &items[k].value {
        Value::Object(e) => e.clone(),
        _ => panic!(),
    };
    let (first, second) = (entries(0), entries(1));
    assert!(std::rc::Rc::ptr_eq(&first[0].0, &second[0].0));
    assert_eq!(first[1].2.value, Value::Bytes([1, 2, 255].into()));
    let Value::Array(numbers) = &second[1].2.value else {
        panic!("{:?}", second[1].2.value)
    };
    assert_eq!(numbers[1].value, Value::Number(Number::Whole(256)));
    assert_eq!(
        numbers[1].pos,
        Pos {
            line: 1,
            column: 64
        }
    );
}
