// The memory estimate against what the engine and the model really allocate,
// on 1, 2 and 4 ranks (4 as 2 emulated nodes of 2), for every ZeRO++ variant;
// the refusal line; the host/device split of a cuda run; the parsers of what the node offers.
#include <array>
#include <catch2/catch.hpp>

#include "src/base/logging.hpp"
#include "src/memory/memory_estimate.hpp"
#include "src/memory/memory_split.hpp"
#include "src/memory/node_memory.hpp"
#include "src/models/gpt2/gpt2.hpp"
#include "src/run/preflight.hpp"
#include "zero/engine_fixture.hpp"

using namespace zeropp;
using test::tiny;
using test::world_size;

namespace {

void check_equal(const MemoryReport& want, const MemoryReport& got) {
  CHECK(got.master == want.master);
  CHECK(got.grad == want.grad);
  CHECK(got.adam == want.adam);
  CHECK(got.gather == want.gather);
  CHECK(got.grad_full == want.grad_full);
  CHECK(got.secondary == want.secondary);
  CHECK(got.qgz == want.qgz);
}

}  // namespace

TEST_CASE("the memory estimate equals what the engine and the model allocate", "[memory]") {
  const int P = world_size();
  struct Variant {
    const char* name;
    const char* dtype;
    bool qw, qg, ef;
    int weight_bits, intra_bits, hpz;
  };
  const Variant variants[] = {
      {"fp32", "fp32", false, false, false, 8, 4, 1},
      {"bf16", "bf16", false, false, false, 8, 4, 1},
      {"qwZ int8", "bf16", true, false, false, 8, 4, 1},
      {"qwZ int4 fp32", "fp32", true, false, false, 4, 4, 1},
      {"hpZ", "bf16", false, false, false, 8, 4, 0},
      {"qgZ", "bf16", false, true, false, 8, 4, 1},
      {"qgZ int8 + EF", "fp32", false, true, true, 8, 8, 1},
      {"ZeRO++", "bf16", true, true, true, 4, 4, 0},
  };
  for (const std::string family : {"gpt2", "llama"})  // GPT-2's tied embeddings: a shared unit
    for (const Variant& v : variants) DYNAMIC_SECTION(family << " " << v.name << " on P=" << P) {
        Config c = tiny(2, v.dtype);
        c.model.family = deck_value<ModelFamily>(family).value();
        c.zero.ranks_per_node = P == 4 ? 2 : 0;
        c.zero.quantized_weights = v.qw;
        c.zero.weight_bits = v.weight_bits;
        c.zero.weight_block = 32;
        c.zero.quantized_gradients = v.qg;
        c.zero.gradient_block = 16;
        c.zero.intra_node_gradient_bits = v.intra_bits;
        c.zero.gradient_error_feedback = v.ef;
        c.zero.hpz_partition_size = v.hpz;
        c.train.batch_size = 3;  // B·T and T·T terms of different sizes
        c.train.seq_len = 12;
        Run run(c);
        const MemoryEstimate e = estimate_memory(c, run.topo.P, run.topo.X);
        check_equal(e.states, run.engine.memory());
        const int64_t engine_tokens = 2 * 4 * int64_t(c.train.batch_size) * c.train.seq_len;
        CHECK(e.activations == run.model->activation_bytes() + engine_tokens);
        CHECK(run.memory.need.total() == e.total());  // what Run checked before allocating
        // The same deck's frozen engine (generate, eval, rlhf's reference): its states alone.
        Engine frozen(c, run.topo, *run.comm, *run.model, true);
        const MemoryEstimate f = estimate_frozen_memory(c, run.topo.P, run.topo.X);
        check_equal(f.states, frozen.memory());
        CHECK(f.activations == e.activations);
        if (v.hpz == 0 && run.topo.X > 1) CHECK(e.states.secondary > 0);
        if (v.qg) CHECK(e.states.qgz > 0);
      }
}

TEST_CASE("the estimate's model states are 16 bytes per GPT-2 parameter on one rank", "[memory]") {
  // Independent of the layout code: GPT-2's parameter count in closed form.
  Config c;
  c.model = {256, 64, 3, 4, 48};  // V, T, L, H, C
  c.zero.comm_dtype = CommDType::FP32;
  const int64_t V = 256, T = 64, L = 3, C = 48;
  const int64_t params = V * C + T * C + L * (12 * C * C + 13 * C) + 2 * C;
  const MemoryEstimate e = estimate_memory(c, 1, 1);
  CHECK(e.states.master == 4 * params);
  CHECK(e.states.master + e.states.grad + e.states.adam == 16 * params);
  CHECK(e.states.secondary == 0);
  CHECK(e.states.qgz == 0);
}

TEST_CASE("activation bytes match GPT<float>'s buffers for several shapes", "[memory]") {
  for (const auto& [L, C, H, V, B, T] :
       std::vector<std::array<int, 6>>{{1, 16, 2, 256, 2, 32}, {3, 24, 3, 11, 5, 7}, {2, 64, 4, 50, 1, 64}}) {
    ModelConfig m{V, T, L, H, C};
    GPT<float> model(m, B, T);
    CHECK(activation_bytes(m, B, T) == model.activation_bytes() + 8 * int64_t(B) * T);
  }
}

TEST_CASE("the memory refusal: one line with needed, offered and the knobs", "[memory]") {
  Config c = tiny(1, "bf16");
  MemoryCheck m;
  m.need = estimate_memory(c, 2, 2);
  m.ranks_on_node = 4;
  m.node = {4 * m.need.total(), "MemAvailable"};
  CHECK_FALSE(memory_refusal(m, c));  // exactly enough
  m.node.bytes -= 1;
  const auto r = memory_refusal(m, c);
  REQUIRE(r);
  CHECK(r->find('\n') == std::string::npos);
  CHECK_THAT(*r, Catch::Contains("each rank needs " + human_bytes(double(m.need.total()))) &&
                     Catch::Contains("MemAvailable") && Catch::Contains("for 4 ranks") &&
                     Catch::Contains("train.batch_size") && Catch::Contains("more nodes"));
  CHECK_THAT(*r, !Catch::Contains("hpz_partition_size"));  // hpZ is off: not a knob
  c.zero.hpz_partition_size = 2;
  m.need = estimate_memory(c, 2, 2);
  m.node.bytes = 0;
  CHECK_THAT(*memory_refusal(m, c), Catch::Contains("zero.hpz_partition_size = 1"));
}

TEST_CASE("what the node offers: MemAvailable, cgroup limits, the variable", "[memory]") {
  CHECK(parse_meminfo_available("MemTotal:  100 kB\nMemFree:  10 kB\nMemAvailable:   22697916 kB\n") ==
        int64_t(22697916) * 1024);
  CHECK_FALSE(parse_meminfo_available("MemTotal:  100 kB\n"));
  CHECK(parse_cgroup_room("8589934592\n", "2147483648\n") == int64_t(6) << 30);
  CHECK_FALSE(parse_cgroup_room("max\n", "123\n"));                         // v2: no limit
  CHECK_FALSE(parse_cgroup_room("9223372036854771712\n", "2839994368\n"));  // v1: no limit
  CHECK(parse_cgroup_room("1000\n", "5000\n") == 0);                        // over the limit
  CHECK_FALSE(parse_cgroup_room("", ""));                                   // no such cgroup
  using Dirs = std::vector<std::string>;
  CHECK(cgroup_memory_dirs("4:memory:/slurm/uid_0/job_7\n3:cpuset:/\n0::/\n") ==
        Dirs{"/sys/fs/cgroup/memory/slurm/uid_0/job_7", "/sys/fs/cgroup/memory", "/sys/fs/cgroup"});
  CHECK(cgroup_memory_dirs("0::/user.slice/job.scope\n") ==
        Dirs{"/sys/fs/cgroup/user.slice/job.scope", "/sys/fs/cgroup"});
  CHECK(cgroup_memory_dirs("5:cpu,memory:/\n") == Dirs{"/sys/fs/cgroup/memory"});
  CHECK(cgroup_memory_dirs("").empty());
  CHECK(parse_byte_count("123") == 123);
  CHECK(parse_byte_count("8G") == int64_t(8) << 30);
  CHECK(parse_byte_count("100K") == 102400);
  for (const char* bad : {"", "abc", "8X", "8GB", "-1", "1.5G", "99999999T"})
    CHECK_FALSE(parse_byte_count(bad));
}

TEST_CASE("split_memory: all on the host for a host run, the model on the GPU for a cuda run", "[memory]") {
  Config c = tiny(1, "bf16");
  c.zero.hpz_partition_size = 2;
  c.zero.quantized_gradients = true;
  const MemoryEstimate e = estimate_memory(c, 4, 2);
  const MemoryReport& r = e.states;
  REQUIRE(r.secondary > 0);
  REQUIRE(r.qgz > 0);
  const MemorySplit host = split_memory(e, c);  // as before the split: the whole estimate on the host
  CHECK(host.device == 0);
  CHECK(host.host == e.total());
  CHECK(host.staging + host.checkpoint + host.data == 0);

  c.train.device = Device::Cuda;
  c.comm.device_staging = true;
  const MemorySplit staged = split_memory(e, c);
  CHECK(staged.device == e.total());
  CHECK(staged.staging == r.gather + r.grad_full + r.qgz + r.secondary);
  CHECK(staged.checkpoint == 4 * 4 * (int64_t(1) << 22));  // four 16 MiB chunks
  CHECK(staged.data == 8 * int64_t(c.train.batch_size) * c.train.seq_len);
  CHECK(staged.host == staged.staging + staged.checkpoint + staged.data);

  c.comm.device_staging = false;  // NCCL: collectives on device buffers, no host copies
  const MemorySplit nccl = split_memory(e, c);
  CHECK(nccl.device == e.total());
  CHECK(nccl.staging == 0);
  CHECK(nccl.host == staged.checkpoint + staged.data);
}

TEST_CASE("a cuda run's host check counts only its host part; the table shows both", "[memory]") {
  Config c = tiny(1, "bf16");
  c.train.device = Device::Cuda;
  c.comm.device_staging = true;
  MemoryCheck m;
  m.need = estimate_memory(c, 2, 2);
  m.need.activations += int64_t(1) << 40;  // 1 TiB: far more than this node offers...
  m.split = split_memory(m.need, c);
  m.ranks_on_node = 2;
  m.node = {2 * m.split.host, "MemAvailable"};
  REQUIRE(m.need.total() > m.node.bytes);
  CHECK_FALSE(memory_refusal(m, c));  // ...but it is the GPU's (DeviceRun checks it): exactly enough host
  const std::string table = memory_summary(m);
  CHECK_THAT(table, Catch::StartsWith("device " + human_bytes(double(m.need.total())) + " (master ") &&
                        Catch::Contains("; host " + human_bytes(double(m.split.host)) + " (MPI staging ") &&
                        Catch::Contains("checkpoint chunks 64.00 MiB"));
  m.node.bytes -= 1;
  const auto r = memory_refusal(m, c);
  REQUIRE(r);
  CHECK_THAT(*r, Catch::StartsWith("memory: each rank of this train.device = \"cuda\" run needs host " +
                                   human_bytes(double(m.split.host))) &&
                     Catch::Contains("comm.backend = \"nccl\""));

  c.train.device = Device::Host;  // the same estimate on the host: one table row as before, refused
  m.split = split_memory(m.need, c);
  CHECK_THAT(memory_summary(m), Catch::StartsWith(human_bytes(double(m.need.total())) + " (master "));
  CHECK_THAT(*memory_refusal(m, c),
             Catch::StartsWith("memory: each rank needs " + human_bytes(double(m.need.total()))));
}
