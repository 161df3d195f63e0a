//! Kernel arguments from Python, checked against the kernel's signature.
//!
//! The Python half marshals each argument into a tagged tuple, so that this side needs no
//! NumPy: `("array", dtype, data, shape)` for a host array (its elements as little-endian
//! bytes in C order, `dtype` NumPy's name), `("device", dtype, address, count)` for an
//! array of `count` elements already on the GPU, `("value", object)` for anything else (a scalar, or a mistake to
//! report). Every error names the kernel and the parameter: the wrong kind or element type
//! is a `TypeError`, a value that does not fit or an array of the wrong size a `ValueError`.

use prism_gpu::pointers::DeviceArg;
use prism_interp::{Arg, KernelInfo, ParamKind};
use prism_types::ty::Scalar;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyTuple};

/// Arguments ready for a launch.
pub enum Marshalled {
    /// For the simulator, or the GPU with copies.
    Host(Vec<Arg>),
    /// For the GPU, in place.
    Device(Vec<DeviceArg>),
}

/// One argument as the Python half sent it.
pub enum Input<'py> {
    Array { dtype: String, data: Bound<'py, PyBytes>, shape: Vec<u64> },
    Device { dtype: String, address: u64, count: u64 },
    Value(Bound<'py, PyAny>),
}

/// NumPy's name for a Prism scalar type.
pub fn dtype_name(t: Scalar) -> &'static str {
    match t {
        Scalar::F32 => "float32",
        Scalar::F64 => "float64",
        Scalar::I32 => "int32",
        Scalar::U32 => "uint32",
        Scalar::I64 => "int64",
        Scalar::U64 => "uint64",
        Scalar::F16 => "float16",
        Scalar::BF16 => "bfloat16",
        Scalar::Bool => "bool",
    }
}

/// The Prism scalar type of a NumPy dtype name, if it has one.
fn scalar_of(dtype: &str) -> Option<Scalar> {
    Some(match dtype {
        "float32" => Scalar::F32,
        "float64" => Scalar::F64,
        "int32" => Scalar::I32,
        "uint32" => Scalar::U32,
        "int64" => Scalar::I64,
        "uint64" => Scalar::U64,
        "float16" => Scalar::F16,
        "bfloat16" => Scalar::BF16,
        "bool" => Scalar::Bool,
        _ => return None,
    })
}

/// Reads one tagged tuple.
fn input<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Input<'py>> {
    let bad = || PyTypeError::new_err("internal: a marshalled argument is a tagged tuple");
    let t = obj.cast::<PyTuple>().map_err(|_| bad())?;
    let tag: String = t.get_item(0)?.extract().map_err(|_| bad())?;
    Ok(match (tag.as_str(), t.len()) {
        ("array", 4) => Input::Array {
            dtype: t.get_item(1)?.extract()?,
            data: t.get_item(2)?.cast_into::<PyBytes>().map_err(|_| bad())?,
            shape: t.get_item(3)?.extract()?,
        },
        ("device", 4) => Input::Device {
            dtype: t.get_item(1)?.extract()?,
            address: t.get_item(2)?.extract()?,
            count: t.get_item(3)?.extract()?,
        },
        ("value", 2) => Input::Value(t.get_item(1)?),
        _ => return Err(bad()),
    })
}

/// Checks `args` against `k`'s parameters and builds the launch's arguments: host ones,
/// or device ones when `device` (every array argument then lives on the GPU).
pub fn marshal(k: &KernelInfo, args: &[Bound<'_, PyAny>], device: bool) -> PyResult<Marshalled> {
    if args.len() != k.params.len() {
        let names: Vec<&str> = k.params.iter().map(|p| p.name.as_str()).collect();
        return Err(PyTypeError::new_err(format!(
            "`{}` takes {} argument{} ({}), but {} {} given",
            k.name,
            k.params.len(),
            if k.params.len() == 1 { "" } else { "s" },
            names.join(", "),
            args.len(),
            if args.len() == 1 { "was" } else { "were" }
        )));
    }
    let mut host = Vec::new();
    let mut dev = Vec::new();
    for (p, a) in k.params.iter().zip(args) {
        let what = format!("argument `{}` of `{}`", p.name, k.name);
        let input = input(a)?;
        match (&p.kind, input) {
            (ParamKind::Scalar(t), Input::Value(v)) => {
                let bits = scalar(&v, *t, &what)?;
                host.push(Arg::Scalar(*t, bits));
                dev.push(DeviceArg::Scalar(*t, bits));
            }
            (ParamKind::Scalar(t), _) => {
                return Err(PyTypeError::new_err(format!(
                    "{what} is a `{}` scalar ({}), not an array",
                    t.name(),
                    dtype_name(*t)
                )));
            }
            (ParamKind::Pointer(t), Input::Array { dtype, data, shape }) if !device => {
                element(&what, *t, &dtype)?;
                host.push(Arg::Buffer(buffer(&what, *t, data.as_bytes(), &shape)?));
            }
            (ParamKind::Pointer(t), Input::Device { dtype, address, count }) if device => {
                element(&what, *t, &dtype)?;
                dev.push(DeviceArg::Pointer { elem: *t, ptr: address, len: count });
            }
            (ParamKind::Pointer(t), Input::Array { .. } | Input::Device { .. }) => {
                return Err(PyTypeError::new_err(format!(
                    "{what}: {} (pointer to `{}`); host and device arrays cannot be mixed in one launch",
                    if device { "a host array among device arrays" } else { "a device array among host arrays" },
                    t.name()
                )));
            }
            (ParamKind::Pointer(t), Input::Value(v)) => {
                return Err(PyTypeError::new_err(format!(
                    "{what} is a pointer to `{}`: pass a NumPy array of {}, not {}",
                    t.name(),
                    dtype_name(*t),
                    type_name(&v)
                )));
            }
            (ParamKind::TensorMap(m), Input::Array { dtype, data, shape }) if !device => {
                element(&what, m.elem, &dtype)?;
                let buffer = buffer(&what, m.elem, data.as_bytes(), &shape)?;
                m.check_dims(&shape).map_err(|e| PyValueError::new_err(format!("{what}: the array {e}")))?;
                host.push(Arg::Tensor { buffer, dims: shape });
            }
            (ParamKind::TensorMap(m), _) => {
                return Err(PyTypeError::new_err(format!(
                    "{what} is a tensor map of `{}`: pass the NumPy array it describes ({} dimensions){}",
                    m.elem.name(),
                    m.rank,
                    if device { "; launches with device arrays cannot build tensor maps yet" } else { "" }
                )));
            }
            (ParamKind::Opaque, _) => {
                return Err(PyTypeError::new_err(format!(
                    "{what} is an untyped `CUTensorMap`, which a launch cannot build; declare it `tensor_map(T[rows][cols])`"
                )));
            }
        }
    }
    Ok(if device { Marshalled::Device(dev) } else { Marshalled::Host(host) })
}

/// Checks an array's element type against a parameter's.
fn element(what: &str, t: Scalar, dtype: &str) -> PyResult<()> {
    match scalar_of(dtype) {
        Some(s) if s == t => Ok(()),
        _ => Err(PyTypeError::new_err(format!(
            "{what} points to `{}` ({}), but the array's dtype is {dtype}",
            t.name(),
            dtype_name(t)
        ))),
    }
}

/// A buffer from an array's bytes.
fn buffer(what: &str, t: Scalar, data: &[u8], shape: &[u64]) -> PyResult<prism_interp::Buffer> {
    let size = t.size() as usize;
    let count = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
    if count.and_then(|c| c.checked_mul(size as u64)) != Some(data.len() as u64) {
        return Err(PyValueError::new_err(format!(
            "{what}: {} bytes do not hold an array of shape {shape:?} of {}",
            data.len(),
            dtype_name(t)
        )));
    }
    if data.len() / size > prism_interp::args::MAX_ELEMS {
        return Err(PyValueError::new_err(format!(
            "{what}: more than {} elements, the most the simulator takes",
            prism_interp::args::MAX_ELEMS
        )));
    }
    Ok(prism_gpu::device::from_bytes(t, data))
}

/// A Python value as register bits of `t`.
fn scalar(v: &Bound<'_, PyAny>, t: Scalar, what: &str) -> PyResult<u64> {
    let numpy_bool = matches!(type_name(v).as_str(), "numpy.bool_" | "numpy.bool");
    if t == Scalar::Bool {
        if v.is_instance_of::<PyBool>() || numpy_bool {
            return Ok(u64::from(v.is_truthy()?));
        }
        return Err(PyTypeError::new_err(format!("{what} is a `bool`: pass True or False, not {}", type_name(v))));
    }
    if v.is_instance_of::<PyBool>() || numpy_bool {
        return Err(PyTypeError::new_err(format!(
            "{what} is a `{}` scalar ({}): pass a number, not a bool",
            t.name(),
            dtype_name(t)
        )));
    }
    if t.is_float() {
        // A finite value too large for the type is refused, as the command line's `--arg` and
        // the source's literals refuse it, rather than becoming an infinity; an infinity
        // passed as one (`math.inf`) stays one. An `int` beyond a double's range is refused
        // the same way.
        let too_large = || {
            PyValueError::new_err(format!(
                "{what}: {} does not fit in `{}` (its finite values lie within ±{}; pass math.inf for an infinity)",
                v.str().map(|s| s.to_string()).unwrap_or_default(),
                t.name(),
                prism_types::consts::float_max_text(t)
            ))
        };
        let x: f64 = match v.extract() {
            Ok(x) => x,
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(v.py()) => return Err(too_large()),
            Err(_) => {
                return Err(PyTypeError::new_err(format!(
                    "{what} is a `{}` scalar: pass a number, not {}",
                    t.name(),
                    type_name(v)
                )));
            }
        };
        let bits = prism_interp::value::from_f64(t, x);
        if x.is_finite() && prism_interp::value::to_f64(t, bits).is_infinite() {
            return Err(too_large());
        }
        return Ok(bits);
    }
    if v.is_instance_of::<PyFloat>() || v.hasattr("__float__")? && !v.hasattr("__index__")? {
        return Err(PyTypeError::new_err(format!(
            "{what} is a `{}` scalar ({}): pass an integer, not {}",
            t.name(),
            dtype_name(t),
            type_name(v)
        )));
    }
    let i: i128 = match v.extract() {
        Ok(i) => i,
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(v.py()) => {
            return Err(PyValueError::new_err(format!("{what}: {} does not fit in `{}`", v.str()?, t.name())));
        }
        Err(_) => {
            return Err(PyTypeError::new_err(format!(
                "{what} is a `{}` scalar ({}): pass an integer, not {}",
                t.name(),
                dtype_name(t),
                type_name(v)
            )));
        }
    };
    let bits = t.size() * 8;
    let (lo, hi) =
        if t.is_signed_int() { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) };
    if !(lo..=hi).contains(&i) {
        return Err(PyValueError::new_err(format!("{what}: {i} does not fit in `{}` ({lo}..={hi})", t.name())));
    }
    Ok(prism_interp::value::norm(t, i as u64))
}

/// `module.Type` of a value (just `Type` for builtins), for messages.
fn type_name(v: &Bound<'_, PyAny>) -> String {
    let ty = v.get_type();
    let name = ty.qualname().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
    match ty.module().map(|m| m.to_string()) {
        Ok(m) if m != "builtins" => format!("{m}.{name}"),
        _ => name,
    }
}
