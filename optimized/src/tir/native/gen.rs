//! The code generator's state: the Cranelift function being built, the variable and
//! buffer tables, fuel, error sites and what the analysis knows (intervals, definite
//! binding). Statements are in [`super::stmt`], expressions in [`super::expr`].

use super::ty::{Iv, Ty};
use super::{helpers, Ctx, NativeFunc, Site, Unsupported, What};
use crate::dtype::DType;
use crate::tir::lower::{assigned, walk, Dim, ExKind, Lowered, Slot, StKind};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, AbiParam, Block, InstBuilder, MemFlagsData, SigRef, Signature, Type, Value};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};
use spec_model::grammar::DataType;
use spec_model::Span;
use std::collections::{HashMap, HashSet};
use std::mem::offset_of;

pub type R<T> = Result<T, Unsupported>;

pub fn unsupported<T>(why: impl Into<String>) -> R<T> {
    Err(Unsupported(why.into()))
}

/// A variable slot in native code.
#[derive(Clone, Copy)]
pub struct VarInfo {
    pub var: Variable,
    pub dt: DataType,
    pub ty: Ty,
    /// 1 once bound (read only where binding is not certain).
    pub flag: Variable,
}

/// A dimension of a buffer in native code.
#[derive(Clone, Copy)]
pub enum DimV {
    Const(i64),
    /// Known at run time; `sym`: equal to that invariant variable's value.
    Dyn {
        var: Variable,
        sym: Option<Slot>,
    },
}

pub struct BufInfo {
    pub data: Variable,
    pub dims: Vec<DimV>,
    pub dtype: DType,
    pub param: bool,
}

/// A value in a register with its TIR dtype, native type and (integers) interval.
#[derive(Clone, Copy)]
pub struct V {
    pub v: Value,
    pub dt: DataType,
    pub ty: Ty,
    pub iv: Option<Iv>,
}

pub struct Gen<'a, 'f> {
    pub b: FunctionBuilder<'f>,
    pub low: &'a Lowered,
    pub ctx: Value,
    pub vars: Vec<Option<VarInfo>>,
    pub bufs: Vec<Option<BufInfo>>,
    pub fuel: Variable,
    /// Fuel charged but not yet checked (merged until something can fail).
    pub pending: u64,
    pub sites: Vec<Site>,
    pub exit: Block,
    pub ivs: HashMap<Slot, Iv>,
    /// `v -> s`: variable `v` is below the value of invariant variable `s`.
    pub sym: HashMap<Slot, Slot>,
    pub invariant: HashSet<Slot>,
    pub defined: HashSet<Slot>,
    pub allocated: HashSet<Slot>,
    sigs: HashMap<(Vec<Type>, Vec<Type>), SigRef>,
    pub checks: (u32, u32),
    /// The vector loop being generated: its lane variables, end and fuel per iteration.
    pub lane_slots: HashSet<Slot>,
    pub vector_end: Option<Value>,
    pub vector_cost: i64,
}

/// Offsets of [`Ctx`] fields.
pub mod off {
    use super::*;
    pub const FUEL: i32 = offset_of!(Ctx, fuel) as i32;
    pub const SITE: i32 = offset_of!(Ctx, site) as i32;
    pub const A: i32 = offset_of!(Ctx, a) as i32;
    pub const B: i32 = offset_of!(Ctx, b) as i32;
    pub const C: i32 = offset_of!(Ctx, c) as i32;
    pub const VARS: i32 = offset_of!(Ctx, vars) as i32;
    pub const BUFS: i32 = offset_of!(Ctx, bufs) as i32;
    pub const DIMS: i32 = offset_of!(Ctx, dims) as i32;
    pub const HOST: i32 = offset_of!(Ctx, host) as i32;
}

pub fn flags() -> MemFlagsData {
    MemFlagsData::new()
}

pub fn compile(low: &Lowered) -> R<NativeFunc> {
    let mut fb = settings::builder();
    let set = |fb: &mut settings::Builder, k: &str, v: &str| fb.set(k, v).map_err(|e| Unsupported(e.to_string()));
    set(&mut fb, "opt_level", "speed")?;
    set(&mut fb, "use_colocated_libcalls", "false")?;
    set(&mut fb, "is_pic", "false")?;
    let isa = cranelift_native::builder()
        .map_err(|e| Unsupported(format!("no native code generator for this machine: {e}")))?
        .finish(settings::Flags::new(fb))
        .map_err(|e| Unsupported(e.to_string()))?;
    let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
    let mut sig = module.make_signature();
    sig.params.push(AbiParam::new(types::I64));
    sig.returns.push(AbiParam::new(types::I32));
    let id = module.declare_function("primfunc", Linkage::Local, &sig).map_err(|e| Unsupported(e.to_string()))?;
    let mut cx: Context = module.make_context();
    cx.func.signature = sig;
    let mut fcx = FunctionBuilderContext::new();
    let (sites, dim_offsets, locals, checks) = {
        let b = FunctionBuilder::new(&mut cx.func, &mut fcx);
        let mut g = Gen::new(b, low)?;
        let dim_offsets = g.entry()?;
        g.stmts(&low.body)?;
        g.flush();
        let fuel = g.b.use_var(g.fuel);
        g.b.ins().store(flags(), fuel, g.ctx, off::FUEL);
        let ok = g.b.ins().iconst(types::I32, 0);
        g.b.ins().return_(&[ok]);
        g.finish_exit();
        g.b.seal_all_blocks();
        g.b.finalize(module.target_config());
        let locals = low_locals(low);
        (g.sites, dim_offsets, locals, g.checks)
    };
    module.define_function(id, &mut cx).map_err(|e| Unsupported(format!("code generation failed: {e:?}")))?;
    module.clear_context(&mut cx);
    module.finalize_definitions().map_err(|e| Unsupported(e.to_string()))?;
    let code = module.get_finalized_function(id);
    // Safety: `code` is the function just defined with signature `(i64) -> i32`.
    let entry = unsafe { std::mem::transmute::<*const u8, unsafe extern "C" fn(*mut Ctx) -> u32>(code) };
    Ok(NativeFunc { module: Some(module), entry, sites, dim_offsets, locals, checks_elided: checks })
}

/// Scratch buffers and their storage dtypes.
fn low_locals(low: &Lowered) -> Vec<(u32, DType)> {
    let mut out = Vec::new();
    walk(&low.body, &mut |s| {
        if let StKind::Alloc { buf, dt, .. } = &s.kind {
            if let Some(d) = DType::of(*dt) {
                out.push((*buf, d));
            }
        }
    });
    out
}

impl<'a, 'f> Gen<'a, 'f> {
    fn new(mut b: FunctionBuilder<'f>, low: &'a Lowered) -> R<Gen<'a, 'f>> {
        let start = b.create_block();
        b.append_block_params_for_function_params(start);
        b.switch_to_block(start);
        let ctx = b.block_params(start)[0];
        let exit = b.create_block();
        for _ in 0..4 {
            b.append_block_param(exit, types::I64);
        }
        b.set_cold_block(exit);
        let fuel = b.declare_var(types::I64);
        let mut g = Gen {
            b,
            low,
            ctx,
            vars: vec![None; low.var_names.len()],
            bufs: (0..low.buf_names.len()).map(|_| None).collect(),
            fuel,
            pending: 0,
            sites: Vec::new(),
            exit,
            ivs: HashMap::new(),
            sym: HashMap::new(),
            invariant: HashSet::new(),
            defined: HashSet::new(),
            allocated: HashSet::new(),
            sigs: HashMap::new(),
            checks: (0, 0),
            lane_slots: HashSet::new(),
            vector_end: None,
            vector_cost: 0,
        };
        g.declare_vars()?;
        Ok(g)
    }

    /// Every variable slot's dtype, from the places that bind it.
    fn declare_vars(&mut self) -> R<()> {
        let low = self.low;
        let mut dts: Vec<Option<(DataType, bool)>> = vec![None; low.var_names.len()];
        let mut note = |slot: Slot, dt: DataType, index: bool| -> R<()> {
            match dts[slot as usize] {
                Some((d, _)) if d != dt => unsupported("a variable bound with two dtypes"),
                _ => {
                    dts[slot as usize] = Some((dt, index || dts[slot as usize].is_some_and(|x| x.1)));
                    Ok(())
                }
            }
        };
        for p in low.scalars.iter() {
            note(p.var, p.dt, false)?;
        }
        for p in low.tensors.iter() {
            for d in p.buffer.iter().flat_map(|b| b.dims.iter()) {
                if let Dim::Bind(v, dt) = d {
                    note(*v, *dt, true)?;
                }
            }
        }
        let mut err = None;
        walk(&low.body, &mut |s| {
            let r = match &s.kind {
                StKind::For { var, dt, .. } => note(*var, *dt, true),
                StKind::Let { var, dt, .. } => note(*var, *dt, false),
                StKind::Block(b) => b.axes.iter().try_for_each(|a| note(a.var, a.dt, true)),
                _ => Ok(()),
            };
            if let Err(e) = r {
                err.get_or_insert(e);
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
        for (slot, d) in dts.iter().enumerate() {
            let Some((dt, index)) = *d else { continue };
            let Some(ty) = Ty::of(dt) else {
                return unsupported(format!("variable `{}` of dtype {dt}", low.var_names[slot]));
            };
            if index && (ty.is_float() || ty.is_u64()) {
                return unsupported(format!("loop or axis variable `{}` of dtype {dt}", low.var_names[slot]));
            }
            let var = self.b.declare_var(ty.reg());
            let flag = self.b.declare_var(types::I64);
            self.vars[slot] = Some(VarInfo { var, dt, ty, flag });
        }
        Ok(())
    }

    /// The entry block: fuel, the parameters' variables and buffers, scratch buffers
    /// unallocated. Returns where each parameter buffer's dimensions are in `Ctx::dims`.
    fn entry(&mut self) -> R<Vec<(Slot, usize)>> {
        let low = self.low;
        let fl = flags();
        let f = self.b.ins().load(types::I64, fl, self.ctx, off::FUEL);
        self.b.def_var(self.fuel, f);
        let zero = self.b.ins().iconst(types::I64, 0);
        let one = self.b.ins().iconst(types::I64, 1);
        for info in self.vars.iter().flatten() {
            let z = match info.ty.reg() {
                types::F32 => self.b.ins().f32const(0.0),
                types::F64 => self.b.ins().f64const(0.0),
                _ => zero,
            };
            self.b.def_var(info.var, z);
            self.b.def_var(info.flag, zero);
        }
        let vars_ptr = self.b.ins().load(types::I64, fl, self.ctx, off::VARS);
        let mut entry_bound: Vec<Slot> = low.scalars.iter().map(|p| p.var).collect();
        for p in low.tensors.iter() {
            for d in p.buffer.iter().flat_map(|b| b.dims.iter()) {
                if let Dim::Bind(v, _) = d {
                    entry_bound.push(*v);
                }
            }
        }
        let body_assigned = assigned(&low.body);
        for &slot in &entry_bound {
            let Some(info) = self.vars[slot as usize] else { continue };
            let raw = self.b.ins().load(types::I64, fl, vars_ptr, (slot as i32) * 8);
            let v = match info.ty {
                Ty::Int { .. } => raw,
                Ty::Float { bits: 64 } => self.b.ins().bitcast(types::F64, MemFlagsData::new(), raw),
                Ty::Float { .. } => {
                    let d = self.b.ins().bitcast(types::F64, MemFlagsData::new(), raw);
                    self.b.ins().fdemote(types::F32, d)
                }
            };
            self.b.def_var(info.var, v);
            self.b.def_var(info.flag, one);
            self.defined.insert(slot);
            if let Some(r) = info.ty.range() {
                self.ivs.insert(slot, r);
            }
            if !body_assigned.contains(&slot) {
                self.invariant.insert(slot);
            }
        }
        let bufs_ptr = self.b.ins().load(types::I64, fl, self.ctx, off::BUFS);
        let dims_ptr = self.b.ins().load(types::I64, fl, self.ctx, off::DIMS);
        let mut offsets = Vec::new();
        let mut next = 0usize;
        for p in low.tensors.iter() {
            let Some(bp) = &p.buffer else { continue };
            let Some(dtype) = DType::of(bp.dt) else {
                return unsupported(format!("buffer of dtype {}", bp.dt));
            };
            let data = self.b.declare_var(types::I64);
            let ptr = self.b.ins().load(types::I64, fl, bufs_ptr, (bp.buf as i32) * 8);
            self.b.def_var(data, ptr);
            offsets.push((bp.buf, next));
            let mut dims = Vec::new();
            for (k, d) in bp.dims.iter().enumerate() {
                let dim = match d {
                    Dim::Check(e) => match e.kind {
                        ExKind::Const(v) if v.int_value().is_some_and(|i| (0..=i128::from(i64::MAX)).contains(&i)) => {
                            DimV::Const(v.int_value().unwrap_or_default() as i64)
                        }
                        _ => self.dyn_dim(dims_ptr, next + k, None),
                    },
                    Dim::Bind(v, _) => {
                        let sym = self.invariant.contains(v).then_some(*v);
                        self.dyn_dim(dims_ptr, next + k, sym)
                    }
                };
                dims.push(dim);
            }
            next += bp.dims.len();
            if self.bufs[bp.buf as usize].is_some() {
                return unsupported("a buffer passed twice");
            }
            self.bufs[bp.buf as usize] = Some(BufInfo { data, dims, dtype, param: true });
            self.allocated.insert(bp.buf);
        }
        self.declare_locals(zero)?;
        Ok(offsets)
    }

    fn dyn_dim(&mut self, dims_ptr: Value, index: usize, sym: Option<Slot>) -> DimV {
        let var = self.b.declare_var(types::I64);
        let d = self.b.ins().load(types::I64, flags(), dims_ptr, (index as i32) * 8);
        self.b.def_var(var, d);
        DimV::Dyn { var, sym }
    }

    fn declare_locals(&mut self, zero: Value) -> R<()> {
        let low = self.low;
        let mut allocs = Vec::new();
        walk(&low.body, &mut |s| {
            if let StKind::Alloc { buf, dt, shape } = &s.kind {
                allocs.push((*buf, *dt, shape));
            }
        });
        for (buf, dt, shape) in allocs {
            if self.bufs[buf as usize].as_ref().is_some_and(|b| b.param) {
                return unsupported("a parameter buffer allocated again");
            }
            if self.bufs[buf as usize].is_some() {
                continue;
            }
            // A dtype without storage fails at its allocation; nothing reads it.
            let dtype = DType::of(dt).unwrap_or(DType::U8);
            let data = self.b.declare_var(types::I64);
            self.b.def_var(data, zero);
            let dims = shape
                .iter()
                .map(|e| match e.kind {
                    ExKind::Const(v) if v.int_value().is_some_and(|i| (0..=1 << 40).contains(&i)) => {
                        DimV::Const(v.int_value().unwrap_or_default() as i64)
                    }
                    _ => {
                        let var = self.b.declare_var(types::I64);
                        self.b.def_var(var, zero);
                        let sym = match e.kind {
                            ExKind::Var(s) if self.invariant.contains(&s) => Some(s),
                            _ => None,
                        };
                        DimV::Dyn { var, sym }
                    }
                })
                .collect();
            self.bufs[buf as usize] = Some(BufInfo { data, dims, dtype, param: false });
        }
        Ok(())
    }

    /// A new error site.
    pub fn site(&mut self, what: What, span: Span) -> i64 {
        self.sites.push(Site { what, span });
        (self.sites.len() - 1) as i64
    }

    /// Continues only where `ok` holds; elsewhere stops at a new site with payloads.
    pub fn check(&mut self, ok: Value, what: What, span: Span, payload: [Option<Value>; 3]) {
        self.flush();
        self.check_now(ok, what, span, payload);
    }

    /// [`Gen::check`] without settling pending fuel first (the caller did).
    fn check_now(&mut self, ok: Value, what: What, span: Span, payload: [Option<Value>; 3]) {
        let id = self.site(what, span);
        let fail = self.b.create_block();
        let cont = self.b.create_block();
        self.b.set_cold_block(fail);
        self.b.ins().brif(ok, cont, &[], fail, &[]);
        self.b.switch_to_block(fail);
        self.stop(id, payload);
        self.b.switch_to_block(cont);
    }

    /// Jumps to the exit with site `id` (the current block ends).
    fn stop(&mut self, id: i64, payload: [Option<Value>; 3]) {
        let site = self.b.ins().iconst(types::I64, id);
        let mut args = vec![site.into()];
        for p in payload {
            let v = match p {
                Some(v) => v,
                None => self.b.ins().iconst(types::I64, 0),
            };
            args.push(v.into());
        }
        self.b.ins().jump(self.exit, &args);
    }

    /// Stops here unconditionally; code after it is unreachable (in a fresh block).
    pub fn fail(&mut self, what: What, span: Span, payload: [Option<Value>; 3]) {
        self.flush();
        let id = self.site(what, span);
        self.stop(id, payload);
        let dead = self.b.create_block();
        self.b.switch_to_block(dead);
    }

    pub fn charge(&mut self, n: u64) {
        self.pending = self.pending.saturating_add(n);
    }

    /// Settles the pending charge: `FuelExhausted` when less fuel is left.
    pub fn flush(&mut self) {
        if self.pending == 0 {
            return;
        }
        let n = self.pending.min(i64::MAX as u64) as i64;
        self.pending = 0;
        let n = self.b.ins().iconst(types::I64, n);
        self.charge_value(n);
    }

    /// Charges `n` units known at run time (pending charges settled first).
    pub fn charge_value(&mut self, n: Value) {
        self.flush();
        let f = self.b.use_var(self.fuel);
        let ok = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, f, n);
        let id = self.site(What::Fuel, Span::SYNTHETIC);
        let fail = self.b.create_block();
        let cont = self.b.create_block();
        self.b.set_cold_block(fail);
        self.b.ins().brif(ok, cont, &[], fail, &[]);
        self.b.switch_to_block(fail);
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.def_var(self.fuel, zero);
        self.stop(id, [None; 3]);
        self.b.switch_to_block(cont);
        let left = self.b.ins().isub(f, n);
        self.b.def_var(self.fuel, left);
    }

    fn finish_exit(&mut self) {
        let exit = self.exit;
        self.b.switch_to_block(exit);
        let ps = self.b.block_params(exit).to_vec();
        let fl = flags();
        let fuel = self.b.use_var(self.fuel);
        self.b.ins().store(fl, fuel, self.ctx, off::FUEL);
        for (p, o) in ps.iter().zip([off::SITE, off::A, off::B, off::C]) {
            self.b.ins().store(fl, *p, self.ctx, o);
        }
        let one = self.b.ins().iconst(types::I32, 1);
        self.b.ins().return_(&[one]);
    }

    /// Calls the Rust function at `f` with `args`, returning its results.
    pub fn call(&mut self, f: usize, params: &[Type], ret: &[Type], args: &[Value]) -> Vec<Value> {
        let key = (params.to_vec(), ret.to_vec());
        let sig = match self.sigs.get(&key) {
            Some(s) => *s,
            None => {
                let mut s = Signature::new(self.b.func.signature.call_conv);
                s.params.extend(params.iter().map(|t| AbiParam::new(*t)));
                s.returns.extend(ret.iter().map(|t| AbiParam::new(*t)));
                let r = self.b.import_signature(s);
                self.sigs.insert(key, r);
                r
            }
        };
        let callee = self.b.ins().iconst(types::I64, f as i64);
        let call = self.b.ins().call_indirect(sig, callee, args);
        self.b.inst_results(call).to_vec()
    }

    pub fn call1(&mut self, f: usize, params: &[Type], ret: Type, args: &[Value]) -> Value {
        self.call(f, params, &[ret], args)[0]
    }

    /// The host pointer (for allocation).
    pub fn host(&mut self) -> Value {
        self.b.ins().load(types::I64, flags(), self.ctx, off::HOST)
    }

    pub fn f16_round32(&mut self, x: Value) -> Value {
        self.call1(helpers::f16_round_f32 as *const () as usize, &[types::F32], types::F32, &[x])
    }

    /// The value of a dimension.
    pub fn dim_value(&mut self, d: DimV) -> Value {
        match d {
            DimV::Const(c) => self.b.ins().iconst(types::I64, c),
            DimV::Dyn { var, .. } => self.b.use_var(var),
        }
    }
}
