// aten::mm, addmm and bmm on CUDA, and tritonmm.linear, mm and matmul, without Python on a repeated call: the relaunch
// cache (tritonmm/relaunch.py) in C++.
//
// use_tritonmm() registers Python kernels for aten's products; every call then crosses from the
// dispatcher into Python, builds the relaunch key, allocates the result and calls Triton's C launcher,
// which parses each argument again (data_ptr() through Python, cuPointerGetAttribute for each pointer).
// On a slow host that is 17-38 us a product more than aten's own kernel (design.md: native-dispatch), and
// a decode step is nothing but such calls. Here the CUDA kernels for aten::mm, addmm and bmm are this file's: a
// product whose facts (dtype, device, sizes, strides and 16-byte alignment of the operands and the bias)
// equal an earlier call's launches that call's kernels directly with cuLaunchKernelEx; anything else (a
// first call, a product the cache cannot hold, a stream being captured) goes to the Python kernel, which
// plans and launches it and, where its launches can be repeated from here, describes them (native.py:
// describe). tritonmm.linear, mm and matmul ask the same cache from Python (repeat, repeat_mm, remember), one
// call into C++.
//
// A launch is described as Triton 3.6-3.9's launchers make it: the kernel's non-constexpr arguments in
// signature order, then the global and profile scratch pointers (null: kernels that need scratch are not
// taken), grid, 32 * num_warps threads, dynamic shared memory, and the PDL attribute. A tensor descriptor is
// its CUtensorMap, by value, then its shape and strides: the map is encoded here at each launch, over the
// address of the tensor it reads, as Triton's launchers encode it (driver.c, fillTMADescriptorTiled), so the
// TMA and Gluon kernels repeat from here too (design.md: native-tma). A staged product's copies are launches like
// any other, first, into buffers allocated here as the Python call's were (design.md: native-staging).
#include <torch/extension.h>
#include <torch/library.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <cuda.h>
#include <dlfcn.h>
#include <pybind11/stl.h>

#include <array>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

// Where a kernel argument's value comes from at launch (native.py: the same numbers). STAGED_A and STAGED_B: the
// buffers a staged product's copies fill (Entry::staged), allocated at each call.
enum Source : int64_t { A = 0, B = 1, OUT = 2, WORKSPACE = 3, BIAS = 4, STAGED_A = 5, STAGED_B = 6, NULL_POINTER = 7,
                        VALUE = 8 };

struct Param {
  int64_t source;
  int64_t size;      // bytes the kernel reads (1, 2, 4 or 8; 128 for a tensor map)
  uint64_t value;    // for VALUE; for a tensor's address, bytes past it (a launch over some of its rows)
  int64_t map = -1;  // a tensor map over that address: its index in Launch::maps
};

// What a tensor map holds but its address, innermost dimension first, as cuTensorMapEncodeTiled takes it.
struct MapSpec {
  uint32_t elem_type, swizzle, rank, elem_size;
  cuuint64_t dims[5], strides[4];  // strides in bytes, of the outer dimensions
  cuuint32_t box[5];
};

struct Launch {
  CUfunction function;
  unsigned grid[3];
  unsigned threads;
  unsigned shared;
  bool pdl;
  std::vector<Param> params;
  std::vector<MapSpec> maps;
};

struct Entry {
  bool python = false;  // Python runs it every call (its launches cannot be repeated from here)
  std::vector<int64_t> out_sizes, out_strides, workspace;  // workspace: split-K's fp32 (split, M, N), or empty
  // Per operand, the sizes and strides of the buffer its staging copy fills (empty: read as given); the copies are
  // the first launches (design.md: native-staging).
  std::vector<int64_t> staged_sizes[2], staged_strides[2];
  std::vector<Launch> launches;
};

// dtype, device, then sizes, strides and address mod 16 of a, b and the bias (bias: rank, then -1s if none), then a
// batch's entries and a's and b's batch strides (-1s for matrices: a batch never shares a matrix's key).
using Key = std::array<int64_t, 21>;

struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = 1469598103934665603ull;
    for (int64_t v : k) h = (h ^ static_cast<size_t>(v)) * 1099511628211ull;
    return h;
  }
};

// At most this many products; past it the cache starts over (fast_launch.CACHE_ENTRIES).
constexpr size_t kMaxEntries = 4096;
// Tensor maps a launch takes at most (the TMA kernel's: A, B and C).
constexpr size_t kMaxMaps = 4;

std::mutex entries_mutex;
std::unordered_map<Key, std::shared_ptr<const Entry>, KeyHash> entries;
int64_t hits = 0, misses = 0;
std::unique_ptr<torch::Library> library;
// The Python kernels (install): mm(a, b, describe) and addmm(bias, a, b, beta, alpha, describe), each
// returning (result, description or None).
PyObject* python_mm = nullptr;
PyObject* python_addmm = nullptr;
PyObject* python_bmm = nullptr;  // bmm(a, b, describe)

int64_t low_bits(const at::Tensor& t) { return reinterpret_cast<intptr_t>(t.data_ptr()) & 15; }

// Whether a product may be repeated: plain 16-bit operands of ``dims`` dimensions on one device (matrices, or
// batches of as many entries: bmm's), a bias (if any) of matrices' and of their dtype, and no capture (float32's
// precision follows a setting of torch's the key does not hold; captured products plan otherwise: relaunch.key's
// capture fact).
bool cacheable(const at::Tensor& a, const at::Tensor& b, const at::Tensor* bias, int64_t dims = 2) {
  if (a.dim() != dims || b.dim() != dims || a.size(-1) != b.size(-2) ||
      (dims == 3 && (a.size(0) != b.size(0) || bias)) || a.scalar_type() != b.scalar_type() ||
      (a.scalar_type() != at::kBFloat16 && a.scalar_type() != at::kHalf) || !a.is_cuda() || a.device() != b.device())
    return false;
  if (bias && (bias->dim() < 1 || bias->dim() > 2 || bias->scalar_type() != a.scalar_type() ||
               bias->device() != a.device()))
    return false;
  return c10::cuda::currentStreamCaptureStatusMayInitCtx() == c10::cuda::CaptureStatus::None;
}

Key key_of(const at::Tensor& a, const at::Tensor& b, const at::Tensor* bias) {
  Key k = {static_cast<int64_t>(a.scalar_type()), a.get_device(), a.size(-2), a.size(-1), a.stride(-2), a.stride(-1),
           low_bits(a), b.size(-1), b.stride(-2), b.stride(-1), low_bits(b), -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
  if (a.dim() == 3) {  // cacheable: b is a batch of as many entries
    k[18] = a.size(0);
    k[19] = a.stride(0);
    k[20] = b.stride(0);
  }
  if (bias) {
    const int64_t d = bias->dim();
    k[11] = d;
    k[12] = bias->size(0);
    k[13] = bias->stride(0);
    k[14] = d == 2 ? bias->size(1) : -1;
    k[15] = d == 2 ? bias->stride(1) : -1;
    k[16] = low_bits(*bias);
  }
  return k;
}

std::shared_ptr<const Entry> find(const Key& key) {
  std::lock_guard<std::mutex> g(entries_mutex);
  auto it = entries.find(key);
  if (it == entries.end()) {
    ++misses;
    return nullptr;
  }
  ++hits;
  return it->second;
}

// A function of the CUDA driver, by name (nullptr where libcuda.so.1 or the function is missing).
void* driver_function(const char* name) {
  static void* handle = dlopen("libcuda.so.1", RTLD_LAZY);
  return handle ? dlsym(handle, name) : nullptr;
}

using LaunchEx = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);

LaunchEx launch_ex() {
  static LaunchEx fn = reinterpret_cast<LaunchEx>(driver_function("cuLaunchKernelEx"));
  TORCH_CHECK(fn, "tritonmm native dispatch: cuLaunchKernelEx not found in libcuda.so.1");
  return fn;
}

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

using DriverGetVersion = CUresult (*)(int*);

// A tensor map over ``address``, with the settings Triton 3.8-3.9's launchers give every descriptor: unit element
// strides, no interleave, 128-byte L2 promotion, no NaN fill (describe refuses descriptors that ask for one).
void encode(CUtensorMap* map, const MapSpec& spec, uint64_t address) {
  static EncodeTiled fn = reinterpret_cast<EncodeTiled>(driver_function("cuTensorMapEncodeTiled"));
  TORCH_CHECK(fn, "tritonmm native dispatch: cuTensorMapEncodeTiled not found in libcuda.so.1");
  const cuuint32_t unit[5] = {1, 1, 1, 1, 1};
  CUresult status = fn(map, static_cast<CUtensorMapDataType>(spec.elem_type), spec.rank,
                       reinterpret_cast<void*>(address), spec.dims, spec.strides, spec.box, unit,
                       CU_TENSOR_MAP_INTERLEAVE_NONE, static_cast<CUtensorMapSwizzle>(spec.swizzle),
                       CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  TORCH_CHECK(status == CUDA_SUCCESS, "tritonmm native dispatch: cuTensorMapEncodeTiled failed with CUresult ",
              static_cast<int>(status));
  // As Triton's fillTMADescriptorTiled does after encoding (CUTLASS's b7ecaa6, a driver workaround): with drivers up
  // to 13.1, a map over fewer than 128 KiB has bit 21 of its second word cleared.
  static const int driver = [] {
    int version = 0;
    auto get = reinterpret_cast<DriverGetVersion>(driver_function("cuDriverGetVersion"));
    return get && get(&version) == CUDA_SUCCESS ? version : 0;
  }();
  if (driver <= 13010) {
    uint64_t last = 0;  // the last byte the map reaches, from its address
    for (uint32_t i = 0; i < spec.rank; ++i) last += (spec.dims[i] - 1) * (i == 0 ? spec.elem_size : spec.strides[i - 1]);
    if (last + 1 < 128 * 1024) reinterpret_cast<uint64_t*>(map)[1] &= ~(uint64_t{1} << 21);
  }
}

// Whether two tensors touch a common byte: their [first, last + 1) byte ranges meet (kernels.overlaps, which
// Python's checks ask). Addresses, not storages: views of one allocation through two storages are caught too.
bool overlaps(const at::Tensor& x, const at::Tensor& y) {
  if (x.numel() == 0 || y.numel() == 0) return false;
  auto range = [](const at::Tensor& t) {
    int64_t last = 0;  // torch's strides are never negative
    for (int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);
    const auto start = reinterpret_cast<uintptr_t>(t.data_ptr());
    return std::make_pair(start, start + static_cast<uintptr_t>((last + 1) * t.element_size()));
  };
  const auto [x0, x1] = range(x);
  const auto [y0, y1] = range(y);
  return x0 < y1 && y0 < x1;
}

// Whether an out= tensor may take an entry's launches: the layout the entry allocates (sizes, strides, a's dtype
// and device), 16-byte aligned as the launches' pointers were specialized, no gradient asked for (torch's out=
// rule: no argument, out included, requires one while autograd records; Python's checks say so) and no byte
// shared with an operand (torch's out= rule; Python's checks name it).
bool takes_out(const Entry& e, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
               const at::Tensor* bias) {
  if (out.scalar_type() != a.scalar_type() || out.device() != a.device() || low_bits(out) != 0 ||
      out.sizes() != at::IntArrayRef(e.out_sizes) || out.strides() != at::IntArrayRef(e.out_strides))
    return false;
  if (at::GradMode::is_enabled() &&
      (out.requires_grad() || a.requires_grad() || b.requires_grad() || (bias && bias->requires_grad())))
    return false;
  for (const at::Tensor* t : {&a, &b, bias})
    if (t && overlaps(out, *t)) return false;
  return true;
}

// The entry's launches on a, b and the bias, into ``given`` (takes_out's) or a result allocated as the entry says.
at::Tensor run(const Entry& e, const at::Tensor& a, const at::Tensor& b, const at::Tensor* bias,
               const at::Tensor* given = nullptr) {
  c10::cuda::CUDAGuard guard(a.device());
  at::Tensor out = given ? *given : at::empty_strided(e.out_sizes, e.out_strides, a.options());
  at::Tensor ws, staged[2];
  if (!e.workspace.empty()) ws = at::empty(e.workspace, a.options().dtype(at::kFloat));
  for (int i = 0; i < 2; ++i) {
    if (e.staged_sizes[i].empty()) continue;
    staged[i] = at::empty_strided(e.staged_sizes[i], e.staged_strides[i], a.options());
    // The copy's and the product's kernels were specialized for a 16-byte aligned buffer, as torch's caching
    // allocator gives (an allocator that does not: Python's path, whose keys hold alignment, serves it).
    TORCH_CHECK(low_bits(staged[i]) == 0, "tritonmm native dispatch: a staging buffer is not 16-byte aligned; "
                "set TRITONMM_NATIVE=0 with this allocator");
  }
  auto address = [](const at::Tensor& t) { return t.defined() ? reinterpret_cast<uint64_t>(t.data_ptr()) : 0; };
  // by Source: a, b, out, the workspace, the bias, the staged buffers, null
  const uint64_t pointers[NULL_POINTER + 1] = {address(a),  address(b), address(out), address(ws),
                                               bias ? address(*bias) : 0, address(staged[0]), address(staged[1]), 0};
  CUstream stream = c10::cuda::getCurrentCUDAStream(a.get_device()).stream();
  LaunchEx launch = launch_ex();
  for (const Launch& l : e.launches) {
    uint64_t slots[64];
    void* args[64];
    CUtensorMap maps[kMaxMaps];  // the kernel takes each by value (cuda.h aligns the type)
    const size_t n = l.params.size();
    for (size_t i = 0; i < n; ++i) {
      const Param& p = l.params[i];
      if (p.map >= 0) {  // entry_of checked: at most kMaxMaps, each map's index its own
        encode(&maps[p.map], l.maps[p.map], pointers[p.source] + p.value);
        args[i] = &maps[p.map];
        continue;
      }
      // little-endian: the kernel reads the low bytes
      slots[i] = p.source == VALUE ? p.value : p.source == NULL_POINTER ? 0 : pointers[p.source] + p.value;
      args[i] = &slots[i];
    }
    CUlaunchAttribute attr;
    attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config = {};
    config.gridDimX = l.grid[0];
    config.gridDimY = l.grid[1];
    config.gridDimZ = l.grid[2];
    config.blockDimX = l.threads;
    config.blockDimY = 1;
    config.blockDimZ = 1;
    config.sharedMemBytes = l.shared;
    config.hStream = stream;
    config.attrs = l.pdl ? &attr : nullptr;
    config.numAttrs = l.pdl ? 1 : 0;
    CUresult status = launch(&config, l.function, args, nullptr);
    TORCH_CHECK(status == CUDA_SUCCESS, "tritonmm native dispatch: cuLaunchKernelEx failed with CUresult ",
                static_cast<int>(status));
  }
  // As torch's out= kernels do: autograd sees out changed, and a backward that saved it refuses to run on it
  // (an inference tensor has no version to bump)
  if (given && !given->is_inference()) given->unsafeGetTensorImpl()->bump_version();
  return out;
}

// An entry from native.describe's description (None: Python serves it). Called with the GIL held.
std::shared_ptr<Entry> entry_of(const pybind11::object& spec) {
  auto entry = std::make_shared<Entry>();
  if (spec.is_none()) {
    entry->python = true;
    return entry;
  }
  auto t = spec.cast<pybind11::tuple>();
  entry->out_sizes = t[0].cast<std::vector<int64_t>>();
  entry->out_strides = t[1].cast<std::vector<int64_t>>();
  entry->workspace = t[2].cast<std::vector<int64_t>>();
  auto buffers = t[4].cast<pybind11::list>();  // per operand: [sizes, strides] of its staged buffer, or []
  TORCH_CHECK(buffers.size() == 2, "tritonmm native dispatch: a staged buffer's layout per operand");
  for (int i = 0; i < 2; ++i) {
    auto layout = buffers[i].cast<pybind11::list>();
    if (layout.size() == 0) continue;
    entry->staged_sizes[i] = layout[0].cast<std::vector<int64_t>>();
    entry->staged_strides[i] = layout[1].cast<std::vector<int64_t>>();
    TORCH_CHECK(entry->staged_sizes[i].size() == 2 && entry->staged_strides[i].size() == 2,
                "tritonmm native dispatch: a staged buffer is a matrix");  // batches are not staged (product.py)
  }
  for (auto item : t[3].cast<pybind11::list>()) {
    auto d = item.cast<pybind11::tuple>();
    Launch l;
    l.function = reinterpret_cast<CUfunction>(d[0].cast<uint64_t>());
    auto grid = d[1].cast<std::vector<unsigned>>();
    TORCH_CHECK(grid.size() == 3, "tritonmm native dispatch: a grid has three dimensions");
    std::copy(grid.begin(), grid.end(), l.grid);
    l.threads = d[2].cast<unsigned>();
    l.shared = d[3].cast<unsigned>();
    l.pdl = d[4].cast<bool>();
    for (auto p : d[5].cast<pybind11::list>()) {
      auto q = p.cast<pybind11::tuple>();
      Param param{q[0].cast<int64_t>(), q[1].cast<int64_t>(), q[2].cast<uint64_t>()};
      TORCH_CHECK(param.source >= A && param.source <= VALUE, "tritonmm native dispatch: unknown source");
      TORCH_CHECK((param.source != STAGED_A || !entry->staged_sizes[0].empty()) &&
                      (param.source != STAGED_B || !entry->staged_sizes[1].empty()),
                  "tritonmm native dispatch: a launch reads a staged buffer the entry does not make");
      if (q.size() == 4) {  // a tensor map: (elem type, swizzle, dims, byte strides, box, elem size), innermost first
        TORCH_CHECK(param.source < NULL_POINTER && param.size == 128 && l.maps.size() < kMaxMaps,
                    "tritonmm native dispatch: a tensor map reads a tensor, 128 bytes; at most 4 a launch");
        auto m = q[3].cast<pybind11::tuple>();
        auto dims = m[2].cast<std::vector<uint64_t>>();
        auto strides = m[3].cast<std::vector<uint64_t>>();
        auto box = m[4].cast<std::vector<uint32_t>>();
        MapSpec spec{m[0].cast<uint32_t>(), m[1].cast<uint32_t>(), static_cast<uint32_t>(dims.size()),
                     m[5].cast<uint32_t>()};
        TORCH_CHECK(spec.rank >= 1 && spec.rank <= 5 && strides.size() + 1 == spec.rank && box.size() == spec.rank,
                    "tritonmm native dispatch: a tensor map of 1-5 dimensions, its strides one fewer");
        std::copy(dims.begin(), dims.end(), spec.dims);
        std::copy(strides.begin(), strides.end(), spec.strides);
        std::copy(box.begin(), box.end(), spec.box);
        param.map = static_cast<int64_t>(l.maps.size());
        l.maps.push_back(spec);
      }
      l.params.push_back(param);
    }
    TORCH_CHECK(l.params.size() <= 64, "tritonmm native dispatch: more than 64 kernel arguments");
    entry->launches.push_back(std::move(l));
  }
  return entry;
}

void store(const Key& key, std::shared_ptr<const Entry> entry) {
  std::lock_guard<std::mutex> g(entries_mutex);
  if (entries.size() >= kMaxEntries) entries.clear();
  entries[key] = std::move(entry);
}

// A Python kernel's answer: its result, and with ``describe`` the entry its description makes.
using Answer = std::pair<at::Tensor, std::shared_ptr<const Entry>>;

// A product through the cache: repeated where its key is known, else ``python(describe)`` computes it
// (describing it where it may be repeated, which makes its entry).
template <typename Python>
at::Tensor product(const at::Tensor& a, const at::Tensor& b, const at::Tensor* bias, Python python, int64_t dims = 2) {
  if (!cacheable(a, b, bias, dims)) return python(false).first;
  const Key key = key_of(a, b, bias);
  if (auto entry = find(key)) {
    if (!entry->python) return run(*entry, a, b, bias);
    return python(false).first;
  }
  Answer answer = python(true);
  store(key, answer.second);
  return answer.first;
}

// Calls a Python kernel (read from its slot under the GIL, which uninstall empties under it too; its arguments
// built by ``args``, as Python objects are made, under the GIL). A description that cannot be read makes an
// entry that Python serves: the product is computed by then, and stays the caller's.
template <typename Args>
Answer call(PyObject* const* slot, bool describe, Args args) {
  pybind11::gil_scoped_acquire gil;
  TORCH_CHECK(*slot, "tritonmm native dispatch: called after uninstall");
  pybind11::tuple answer = pybind11::reinterpret_borrow<pybind11::object>(*slot)(*args(), describe);
  at::Tensor out = answer[0].cast<at::Tensor>();
  if (!describe) return {out, nullptr};
  try {
    return {out, entry_of(answer[1])};
  } catch (const std::exception&) {
    return {out, entry_of(pybind11::none())};
  }
}

pybind11::object scalar(const at::Scalar& s) {
  if (s.isBoolean()) return pybind11::bool_(s.toBool());
  if (s.isIntegral(false)) return pybind11::int_(s.toLong());
  if (s.isComplex()) return pybind11::cast(s.toComplexDouble());
  return pybind11::float_(s.toDouble());
}

bool is_one(const at::Scalar& s) {
  return (s.isIntegral(false) && s.toLong() == 1) || (s.isFloatingPoint() && s.toDouble() == 1.0);
}

at::Tensor mm(const at::Tensor& a, const at::Tensor& b) {
  return product(a, b, nullptr, [&](bool describe) {
    return call(&python_mm, describe, [&] { return pybind11::make_tuple(a, b); });
  });
}

// aten::bmm: batches of 3-D operands (aten's own kernel, through Python, raises for anything else).
at::Tensor bmm(const at::Tensor& a, const at::Tensor& b) {
  return product(a, b, nullptr, [&](bool describe) {
    return call(&python_bmm, describe, [&] { return pybind11::make_tuple(a, b); });
  }, 3);
}

at::Tensor addmm(const at::Tensor& bias, const at::Tensor& a, const at::Tensor& b, const at::Scalar& beta,
                 const at::Scalar& alpha) {
  auto python = [&](bool describe) {
    return call(&python_addmm, describe,
                [&] { return pybind11::make_tuple(bias, a, b, scalar(beta), scalar(alpha)); });
  };
  if (!is_one(beta) || !is_one(alpha)) return python(false).first;
  return product(a, b, &bias, python);
}

// a @ b (+ bias) from the cache, for the public ops: the result where it is repeated (into ``out`` where given);
// None where the product is not known yet (Python plans it and calls remember); False where Python serves it.
// ``dims``: 2 for matrices, 3 for a batch (matmul's bmm).
pybind11::object repeated(const at::Tensor& a, const at::Tensor& b, const at::Tensor* c,
                          const std::vector<int64_t>* shape = nullptr, const at::Tensor* out = nullptr,
                          int64_t dims = 2) {
  if (!cacheable(a, b, c, dims)) return pybind11::bool_(false);
  auto entry = find(key_of(a, b, c));
  if (!entry) return pybind11::none();
  if (entry->python || (out && !takes_out(*entry, *out, a, b, c))) return pybind11::bool_(false);
  at::Tensor result = run(*entry, a, b, c, out);
  return pybind11::cast(shape ? result.view(*shape) : result);
}

// tritonmm.linear's fast path: x @ weight.T (+ bias). x has any leading dims, flattened here as linear does (a
// view, or a copy where none exists) and the result viewed back: a reshape and a view cost 1-2 us each from Python.
pybind11::object repeat(const at::Tensor& x, const at::Tensor& weight, const std::optional<at::Tensor>& bias) {
  if (weight.dim() != 2 || x.dim() < 1) return pybind11::bool_(false);
  const at::Tensor* c = bias ? &*bias : nullptr;
  if (x.dim() == 2) return repeated(x, weight.t(), c);
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end() - 1);
  int64_t rows = 1;
  for (int64_t size : shape) rows *= size;
  shape.push_back(weight.size(0));
  return repeated(x.reshape({rows, x.size(-1)}), weight.t(), c, &shape);
}

// tritonmm.mm's and matmul's fast path: a @ b of 2-D operands, or of 3-D ones as bmm's batch (matmul's; mm asks
// only for matrices), no bias, into out where given.
pybind11::object repeat_mm(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& out) {
  return repeated(a, b, nullptr, nullptr, out ? &*out : nullptr, a.dim() == 3 ? 3 : 2);
}

void remember(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& bias,
              const pybind11::object& spec) {
  const at::Tensor* c = bias ? &*bias : nullptr;
  if (!cacheable(a, b, c, a.dim() == 3 ? 3 : 2)) return;
  std::shared_ptr<const Entry> entry;
  try {
    entry = entry_of(spec);
  } catch (const std::exception&) {  // as call's: Python serves it
    entry = entry_of(pybind11::none());
  }
  store(key_of(a, b, c), entry);
}

void clear() {
  std::lock_guard<std::mutex> g(entries_mutex);
  entries.clear();
}

void uninstall() {
  library.reset();  // aten's kernels (or the ones registered before) are back
  clear();
  Py_XDECREF(python_mm);
  Py_XDECREF(python_addmm);
  Py_XDECREF(python_bmm);
  python_mm = python_addmm = python_bmm = nullptr;
}

void install(pybind11::object mm_kernel, pybind11::object addmm_kernel, pybind11::object bmm_kernel) {
  TORCH_CHECK(!library, "tritonmm native dispatch: already installed");
  // Replacing aten's kernels is what installing asks for: the dispatcher's warning about it is not shown.
  struct Quiet : c10::WarningHandler {
    void process(const c10::Warning&) override {}
  } quiet;
  c10::WarningUtils::WarningHandlerGuard guard(&quiet);
  python_mm = mm_kernel.inc_ref().ptr();
  python_addmm = addmm_kernel.inc_ref().ptr();
  python_bmm = bmm_kernel.inc_ref().ptr();
  try {
    library = std::make_unique<torch::Library>(torch::Library::IMPL, "aten", c10::DispatchKey::CUDA, __FILE__,
                                               __LINE__);
    library->impl("mm", TORCH_FN(mm));
    library->impl("addmm", TORCH_FN(addmm));
    library->impl("bmm", TORCH_FN(bmm));
  } catch (...) {  // half installed is not a state
    uninstall();
    throw;
  }
}

pybind11::tuple stats() {
  std::lock_guard<std::mutex> g(entries_mutex);
  size_t repeated = 0;
  for (const auto& kv : entries) repeated += !kv.second->python;
  return pybind11::make_tuple(hits, misses, entries.size(), repeated);
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("install", &install, "register aten::mm's, addmm's and bmm's CUDA kernels, with the Python kernels for misses");
  m.def("uninstall", &uninstall, "remove the registrations and every entry");
  m.def("clear", &clear, "forget every entry");
  m.def("repeat", &repeat, "x @ weight.T (+ bias) repeated, None (unknown) or False (Python serves it)");
  m.def("repeat_mm", &repeat_mm, "a @ b repeated (into out, if not None), None (unknown) or False (Python's)");
  m.def("remember", &remember, "make a @ b (+ bias)'s entry from a description (None: Python serves it)");
  m.def("stats", &stats, "(hits, misses, entries, entries repeated from C++)");
}
