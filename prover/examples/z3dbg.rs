use prover::{ShapeProver, Z3Prover};
use spec_model::text::parse_prim_exprs;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let es = parse_prim_exprs(&[&args[1], &args[2]]).unwrap();
    let p = Z3Prover::default();
    eprintln!("start");
    println!("{:?}", p.compare(&es[0], &es[1], &[]));
}
