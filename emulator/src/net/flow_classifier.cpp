#include "net/flow_classifier.h"

#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace contend::emulator::detail {
namespace {

// The flow table's key: IPv4 source and destination, the TCP or UDP ports, the protocol; the
// value: the flow's class and when it last sent.
constexpr int kKeyBytes = 16;
constexpr int kValueBytes = 16;
constexpr int kMaxFlows = 4096;
// A flow that sent nothing for this long takes a class afresh: its packets left its old class's
// queue long before (50 ms at the link's rate, htb_params.h, at worst 1/queues of it per queue).
constexpr std::int32_t kIdleNs = 1'000'000'000;

// Offsets in an Ethernet frame (a veth's egress, where tc's classifiers see the frame whole).
constexpr std::int32_t kEtherType = 12;
constexpr std::int32_t kIpProtocol = 23;
constexpr std::int32_t kIpAddresses = 26;
constexpr std::int32_t kPorts = 34;  // IPv4 without options, as every sender here has

// The stack of the program (offsets from r10): the key at -16 (addresses at -16, ports at -8,
// protocol at -4), the ether type at -24, the clocks' key at -28, a new flow's value at -48.
constexpr std::int16_t kKey = -16;
constexpr std::int16_t kKeyPorts = -8;
constexpr std::int16_t kKeyProtocol = -4;
constexpr std::int16_t kEtherTypeSlot = -24;
constexpr std::int16_t kClocksKey = -28;
constexpr std::int16_t kNewValue = -48;

// An assembler of eBPF instructions with forward jumps to labels.
class Assembler {
 public:
  int label() {
    at_.push_back(-1);
    return static_cast<int>(at_.size()) - 1;
  }
  void place(int label) { at_[static_cast<std::size_t>(label)] = static_cast<int>(code_.size()); }

  void op(std::uint8_t code, std::uint8_t dst, std::uint8_t src, std::int16_t off, std::int32_t imm) {
    bpf_insn i{};
    i.code = code;
    i.dst_reg = dst & 0xf;
    i.src_reg = src & 0xf;
    i.off = off;
    i.imm = imm;
    code_.push_back(i);
  }
  void mov(std::uint8_t dst, std::uint8_t src) { op(BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0); }
  void mov_imm(std::uint8_t dst, std::int32_t imm) { op(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm); }
  void alu_imm(std::uint8_t alu, std::uint8_t dst, std::int32_t imm) { op(BPF_ALU64 | alu | BPF_K, dst, 0, 0, imm); }
  void alu(std::uint8_t alu, std::uint8_t dst, std::uint8_t src) { op(BPF_ALU64 | alu | BPF_X, dst, src, 0, 0); }
  void load(std::uint8_t size, std::uint8_t dst, std::uint8_t src, std::int16_t off) {
    op(BPF_LDX | size | BPF_MEM, dst, src, off, 0);
  }
  void store(std::uint8_t size, std::uint8_t dst, std::int16_t off, std::uint8_t src) {
    op(BPF_STX | size | BPF_MEM, dst, src, off, 0);
  }
  void store_imm(std::uint8_t size, std::uint8_t dst, std::int16_t off, std::int32_t imm) {
    op(BPF_ST | size | BPF_MEM, dst, 0, off, imm);
  }
  void call(std::int32_t helper) { op(BPF_JMP | BPF_CALL, 0, 0, 0, helper); }
  void exit() { op(BPF_JMP | BPF_EXIT, 0, 0, 0, 0); }
  // dst = the map `fd` (two instructions, as the loader reads them).
  void load_map(std::uint8_t dst, int fd) {
    op(BPF_LD | BPF_DW | BPF_IMM, dst, BPF_PSEUDO_MAP_FD, 0, fd);
    op(0, 0, 0, 0, 0);
  }
  // r`reg` = r10 + off: a pointer into the stack.
  void stack_pointer(std::uint8_t reg, std::int16_t off) {
    mov(reg, BPF_REG_10);
    alu_imm(BPF_ADD, reg, off);
  }
  void jump_imm(std::uint8_t cond, std::uint8_t dst, std::int32_t imm, int to) {
    jumps_.emplace_back(code_.size(), to);
    op(BPF_JMP | cond | BPF_K, dst, 0, 0, imm);
  }
  void jump(std::uint8_t cond, std::uint8_t dst, std::uint8_t src, int to) {
    jumps_.emplace_back(code_.size(), to);
    op(BPF_JMP | cond | BPF_X, dst, src, 0, 0);
  }
  void go(int to) { jump_imm(BPF_JA, 0, 0, to); }

  std::vector<bpf_insn> finish() {
    for (const auto& [at, to] : jumps_) {
      code_[at].off = static_cast<std::int16_t>(at_[static_cast<std::size_t>(to)] - static_cast<int>(at) - 1);
    }
    return std::move(code_);
  }

 private:
  std::vector<bpf_insn> code_;
  std::vector<int> at_;
  std::vector<std::pair<std::size_t, int>> jumps_;
};

// r1..r4 for bpf_skb_load_bytes(skb in r6, offset, the stack at `to`, length).
void load_bytes(Assembler& a, std::int32_t offset, std::int16_t to, std::int32_t length) {
  a.mov(BPF_REG_1, BPF_REG_6);
  a.mov_imm(BPF_REG_2, offset);
  a.stack_pointer(BPF_REG_3, to);
  a.mov_imm(BPF_REG_4, length);
  a.call(BPF_FUNC_skb_load_bytes);
}

// The flow's key on the stack: zeros, then what the frame has of it.
void read_key(Assembler& a, int done) {
  a.store_imm(BPF_DW, BPF_REG_10, kKey, 0);
  a.store_imm(BPF_DW, BPF_REG_10, kKeyPorts, 0);
  load_bytes(a, kEtherType, kEtherTypeSlot, 2);
  a.load(BPF_H, BPF_REG_1, BPF_REG_10, kEtherTypeSlot);
  a.jump_imm(BPF_JNE, BPF_REG_1, 0x0008, done);  // ETH_P_IP as a little-endian load sees it
  load_bytes(a, kIpAddresses, kKey, 8);
  load_bytes(a, kIpProtocol, kKeyProtocol, 1);
  a.load(BPF_B, BPF_REG_1, BPF_REG_10, kKeyProtocol);
  const int ports = a.label();
  a.jump_imm(BPF_JEQ, BPF_REG_1, 6, ports);  // TCP
  a.jump_imm(BPF_JNE, BPF_REG_1, 17, done);  // not UDP either
  a.place(ports);
  load_bytes(a, kPorts, kKeyPorts, 4);
}

// r8 = the class no packet used for longest (r7: the classes' clocks), recorded for the flow
// with r9 (now) as its last packet.
void take_idlest_class(Assembler& a, int flows_fd, int queues) {
  a.mov_imm(BPF_REG_8, 0);
  a.load(BPF_DW, BPF_REG_2, BPF_REG_7, 0);
  for (int i = 1; i < queues; ++i) {
    const int later = a.label();
    a.load(BPF_DW, BPF_REG_3, BPF_REG_7, static_cast<std::int16_t>(8 * i));
    a.jump(BPF_JGE, BPF_REG_3, BPF_REG_2, later);
    a.mov(BPF_REG_2, BPF_REG_3);
    a.mov_imm(BPF_REG_8, i);
    a.place(later);
  }
  a.store(BPF_W, BPF_REG_10, kNewValue, BPF_REG_8);
  a.store_imm(BPF_W, BPF_REG_10, kNewValue + 4, 0);
  a.store(BPF_DW, BPF_REG_10, kNewValue + 8, BPF_REG_9);
  a.load_map(BPF_REG_1, flows_fd);
  a.stack_pointer(BPF_REG_2, kKey);
  a.stack_pointer(BPF_REG_3, kNewValue);
  a.mov_imm(BPF_REG_4, BPF_ANY);
  a.call(BPF_FUNC_map_update_elem);
}

// Registers: r6 the packet, r7 the classes' clocks (one array entry of `queues` times), r8 the
// flow's class, r9 now. Returns the class's full handle (cls_bpf without direct action).
std::vector<bpf_insn> flow_program(int flows_fd, int clocks_fd, std::uint32_t first_classid, int queues) {
  Assembler a;
  const int classify = a.label();
  const int fresh = a.label();
  const int mark = a.label();
  const int fallback = a.label();
  a.mov(BPF_REG_6, BPF_REG_1);
  read_key(a, classify);
  a.place(classify);
  a.store_imm(BPF_W, BPF_REG_10, kClocksKey, 0);
  a.load_map(BPF_REG_1, clocks_fd);
  a.stack_pointer(BPF_REG_2, kClocksKey);
  a.call(BPF_FUNC_map_lookup_elem);
  a.jump_imm(BPF_JEQ, BPF_REG_0, 0, fallback);
  a.mov(BPF_REG_7, BPF_REG_0);
  a.call(BPF_FUNC_ktime_get_ns);
  a.mov(BPF_REG_9, BPF_REG_0);
  a.load_map(BPF_REG_1, flows_fd);
  a.stack_pointer(BPF_REG_2, kKey);
  a.call(BPF_FUNC_map_lookup_elem);
  a.jump_imm(BPF_JEQ, BPF_REG_0, 0, fresh);
  a.load(BPF_W, BPF_REG_8, BPF_REG_0, 0);   // its class
  a.load(BPF_DW, BPF_REG_1, BPF_REG_0, 8);  // its last packet
  a.store(BPF_DW, BPF_REG_0, 8, BPF_REG_9);
  a.mov(BPF_REG_2, BPF_REG_9);
  a.alu(BPF_SUB, BPF_REG_2, BPF_REG_1);
  a.jump_imm(BPF_JGT, BPF_REG_2, kIdleNs, fresh);
  a.go(mark);
  a.place(fresh);
  take_idlest_class(a, flows_fd, queues);
  a.place(mark);
  a.alu_imm(BPF_AND, BPF_REG_8, queues - 1);  // the bound the verifier needs before the index
  a.mov(BPF_REG_1, BPF_REG_8);
  a.alu_imm(BPF_LSH, BPF_REG_1, 3);
  a.mov(BPF_REG_2, BPF_REG_7);
  a.alu(BPF_ADD, BPF_REG_2, BPF_REG_1);
  a.store(BPF_DW, BPF_REG_2, 0, BPF_REG_9);
  a.mov(BPF_REG_0, BPF_REG_8);
  a.alu_imm(BPF_ADD, BPF_REG_0, static_cast<std::int32_t>(first_classid));
  a.exit();
  a.place(fallback);
  a.mov_imm(BPF_REG_0, static_cast<std::int32_t>(first_classid));
  a.exit();
  return a.finish();
}

long bpf_call(int cmd, bpf_attr& attr) {
  return ::syscall(SYS_bpf, cmd, &attr, sizeof attr);
}

std::uint64_t address_of(const void* p) {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
}

Error classifier_error(int err, const std::string& what) {
  Error e = errno_error(err, "the fair-queue classifier: " + what);
  if (err != EPERM && err != EACCES) {
    e.code = Errc::kUnsupported;
  }
  return e;
}

Result<Fd> create_map(bpf_map_type type, std::uint32_t key, std::uint32_t value, std::uint32_t entries,
                      const char* name) {
  bpf_attr a{};
  a.map_type = type;
  a.key_size = key;
  a.value_size = value;
  a.max_entries = entries;
  std::strncpy(a.map_name, name, sizeof a.map_name - 1);
  const long fd = bpf_call(BPF_MAP_CREATE, a);
  if (fd < 0) {
    return classifier_error(errno, std::string("bpf(BPF_MAP_CREATE ") + name + ")");
  }
  return Fd(static_cast<int>(fd));
}

// The verifier's last line, where it refused the program.
std::string verifier_says(bpf_attr a) {
  std::string log(1 << 16, '\0');
  a.log_level = 1;
  a.log_buf = address_of(log.data());
  a.log_size = static_cast<std::uint32_t>(log.size());
  (void)bpf_call(BPF_PROG_LOAD, a);
  log.resize(std::strlen(log.c_str()));
  while (!log.empty() && log.back() == '\n') {
    log.pop_back();
  }
  const std::size_t line = log.rfind('\n');
  return line == std::string::npos ? log : log.substr(line + 1);
}

}  // namespace

Result<Fd> load_flow_classifier(std::uint32_t first_minor, int queues) {
  if (queues < 1 || queues > kFlowClassifierMaxQueues || (queues & (queues - 1)) != 0) {
    return make_error(Errc::kInvalidArgument, "the fair-queue classifier takes a power of two up to " +
                                                  std::to_string(kFlowClassifierMaxQueues) + " queues, got " +
                                                  std::to_string(queues));
  }
  auto flows = create_map(BPF_MAP_TYPE_LRU_HASH, kKeyBytes, kValueBytes, kMaxFlows, "contend_flows");
  if (!flows) {
    return flows.error();
  }
  auto clocks = create_map(BPF_MAP_TYPE_ARRAY, 4, static_cast<std::uint32_t>(8 * queues), 1, "contend_clocks");
  if (!clocks) {
    return clocks.error();
  }
  const std::vector<bpf_insn> code = flow_program(flows->get(), clocks->get(), (1u << 16) | first_minor, queues);
  static const char kLicense[] = "Dual MIT/GPL";
  bpf_attr a{};
  a.prog_type = BPF_PROG_TYPE_SCHED_CLS;
  a.insns = address_of(code.data());
  a.insn_cnt = static_cast<std::uint32_t>(code.size());
  a.license = address_of(kLicense);
  std::strncpy(a.prog_name, "contend_fq", sizeof a.prog_name - 1);
  const long fd = bpf_call(BPF_PROG_LOAD, a);
  if (fd < 0) {
    const int err = errno;
    return classifier_error(err, "bpf(BPF_PROG_LOAD): verifier: " + verifier_says(a));
  }
  return Fd(static_cast<int>(fd));  // the program holds its maps: their descriptors close here
}

Result<void> probe_flow_classifier() {
  auto program = load_flow_classifier(1, 2);
  if (!program) {
    return program.error();
  }
  return {};
}

}  // namespace contend::emulator::detail
