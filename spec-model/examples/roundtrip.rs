fn main() {
    let path = std::env::args().nth(1).expect("file");
    let src = std::fs::read_to_string(&path).unwrap();
    match spec_model::text::parse_module(&src) {
        Err(e) => print!("{}", e.render(&path, &src)),
        Ok(m) => {
            let p = spec_model::text::print_module(&m, 100);
            print!("{p}");
            match spec_model::text::parse_module(&p) {
                Err(e) => print!("REPARSE FAILED:\n{}", e.render("printed", &p)),
                Ok(m2) => {
                    if let Err(e) = spec_model::alpha::alpha_eq_module(&m, &m2) {
                        println!("NOT ALPHA-EQ: {e}");
                    }
                    let p2 = spec_model::text::print_module(&m2, 100);
                    if p2 != p {
                        println!("NOT IDEMPOTENT:\n{p2}");
                    }
                }
            }
        }
    }
}
