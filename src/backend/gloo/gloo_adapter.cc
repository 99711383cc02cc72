/*
 * The gloo backend: host-memory collectives between processes over TCP.
 *
 * This is pdmpi's one C++ file. It exposes the C backend vtable
 * (backend/backend.h). Each communicator has two full meshes of gloo
 * pairs: asynchronous ones for gloo's option-style collectives, the
 * exchanges and point-to-point, and synchronous ones that the calling
 * thread reads itself, for the agreement before every step and the
 * pipelined ring and chain. gloo's older per-algorithm classes are not
 * used: built per call, they are read after free by gloo's transport
 * thread when their last sends are still queued, and stall on 40 ms
 * timers (measured: see core/algo.c). Every entry point catches every
 * exception, so no C++ exception crosses into C.
 */
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <stdexcept>
#include <string>
#include <vector>

#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/config.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/buffer.h>
#include <gloo/transport/pair.h>
#include <gloo/transport/tcp/address.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>
#include <gloo/transport/tcp/device.h>

#include "backend/backend.h"
#include "boot/store.h"

namespace {

/* gloo's rendezvous::Store on top of pdmpi's TCP store, under a prefix
 * that is unique per communicator, so contexts never see each other's
 * keys. Every wait is bounded by the job's timeout. */
class PdStore : public gloo::rendezvous::Store {
 public:
  PdStore(pd_store_client* client, std::string prefix, int timeout_ms)
      : client_(client), prefix_(std::move(prefix)), timeout_ms_(timeout_ms) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    char err[512];
    if (pd_store_set(client_, full(key).c_str(), data.data(), data.size(), err,
                     sizeof(err)) != 0)
      throw std::runtime_error(std::string("store set failed: ") + err);
  }

  std::vector<char> get(const std::string& key) override {
    return fetch(key, timeout_ms_);
  }

  void wait(const std::vector<std::string>& keys) override {
    wait(keys, std::chrono::milliseconds(timeout_ms_));
  }

  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override {
    for (const auto& key : keys)
      fetch(key, static_cast<int>(timeout.count()));
  }

 private:
  std::string full(const std::string& key) const { return prefix_ + "/" + key; }

  std::vector<char> fetch(const std::string& key, int timeout_ms) {
    char err[512];
    void* value = nullptr;
    size_t len = 0;
    if (pd_store_get(client_, full(key).c_str(), &value, &len, timeout_ms, err,
                     sizeof(err)) != 0)
      throw std::runtime_error(std::string("store get failed: ") + err);
    std::vector<char> out(static_cast<char*>(value),
                          static_cast<char*>(value) + len);
    free(value);
    return out;
  }

  pd_store_client* client_;
  std::string prefix_;
  int timeout_ms_;
};

/* One TCP device (one epoll thread) per process, shared by all contexts:
 * gloo multiplexes every context's pairs on it. */
std::mutex device_mutex;
std::shared_ptr<gloo::transport::Device> device;
std::string device_desc;

std::shared_ptr<gloo::transport::Device> get_device(const char* host,
                                                    const char* iface) {
  std::lock_guard<std::mutex> lock(device_mutex);
  if (device)
    return device;
  gloo::transport::tcp::attr attr;
  if (iface != nullptr && iface[0] != '\0') {
    attr.iface = iface;
    device_desc = std::string("iface ") + iface;
  } else {
    attr.hostname = (host != nullptr && host[0] != '\0') ? host : "127.0.0.1";
    device_desc = "address " + attr.hostname;
  }
  device = gloo::transport::tcp::CreateDevice(attr);
  return device;
}

void set_error(pd_backend_error* err, const char* what, const char* detail) {
  snprintf(err->msg, sizeof(err->msg), "gloo %s: %s", what, detail);
}

/* Map an exception to a backend status, keeping gloo's own words. */
int fail(pd_backend_error* err, const char* what, const std::exception& e) {
  set_error(err, what, e.what());
  if (strstr(e.what(), "Timed out") != nullptr ||
      strstr(e.what(), "timed out") != nullptr ||
      strstr(e.what(), "Read timeout") != nullptr ||
      strstr(e.what(), "Write timeout") != nullptr)
    return PD_BACKEND_ERR_TIMEOUT;
  return PD_BACKEND_ERR_IO;
}

/* gloo sizes segments by sizeof(T); only the size of T matters, so an
 * opaque element of the datatype's extent keeps segments whole. */
template <size_t N>
struct Elem {
  unsigned char bytes[N];
};

/* What precedes every point-to-point payload. */
struct P2PHeader {
  uint64_t bytes;
  int32_t tag;
  int32_t reserved;
};

P2PHeader p2p_header(size_t bytes, int tag) {
  P2PHeader header;
  header.bytes = bytes;
  header.tag = tag;
  header.reserved = 0;
  return header;
}

constexpr uint8_t kP2PHeaderSlotPrefix = 0x22;
constexpr uint8_t kP2PPayloadSlotPrefix = 0x23;

/* A payload up to this size travels in one message with its header.
 * gloo's sends are a rendezvous (announced, answered by the posted
 * receive, then written), so a second message for the payload would cost
 * a second round trip through both sides' loop threads; larger payloads
 * follow their header on a slot of their own, received in place. */
constexpr size_t kP2PEagerBytes = 64 * 1024;

/* The receiving thread waits for the next header with no deadline (an
 * idle communicator is no error); MPI_Comm_free aborts that wait. gloo's
 * own timeouts would close the whole context. */
constexpr std::chrono::milliseconds kNoDeadline = std::chrono::hours(24 * 365);

}  // namespace

struct pd_p2p_send {
  P2PHeader header;
  std::vector<unsigned char> packed;  // header and an eager payload
  std::unique_ptr<gloo::transport::UnboundBuffer> header_buf;
  std::unique_ptr<gloo::transport::UnboundBuffer> payload_buf;
};

/* The agreement's channel: a second full mesh whose pairs are in gloo's
 * synchronous mode, so the calling thread writes its record and reads
 * the peers' straight from the sockets, with no loop-thread hand-off and
 * no rendezvous before a message moves (an asynchronous pair announces a
 * receive and waits for that announcement before it sends: 1.5 round
 * trips and four thread wake-ups for one record). A record and up to
 * inline_bytes bytes travel as one message into a buffer registered once
 * per peer (its total length first); the rest, if any, follows as a
 * second message received in place. One agreement at a time uses the
 * channel.
 *
 * A second message costs a write and two reads more on each side: 2-16
 * KiB allreduces at np 2 took 20-26 us where 1 KiB took 11 with 1536
 * bytes inline. The inline room is as large as a quarter MiB over all
 * peers allows, between 1536 bytes and 16 KiB (with 16 KiB: 10-15 us at
 * 2-16 KiB), so a communicator's inboxes take at most about 256 KiB, or
 * 1.5 KiB per rank on very large ones. */
constexpr size_t kAgreeInlineMin = 1536;
constexpr size_t kAgreeInlineMax = 16 * 1024 + 64;  // 16 KiB and a record
constexpr size_t kAgreeInboxes = 256 * 1024;
constexpr size_t kAgreeTotalBytes = sizeof(uint64_t);  // before the record

size_t agree_inline(int size) {
  size_t share = kAgreeInboxes / static_cast<size_t>(size) / 64 * 64;
  return std::max(kAgreeInlineMin, std::min(kAgreeInlineMax, share));
}

/* gloo sets a pair's send buffer (SO_SNDBUF) to the size of each message
 * larger than any it sent before. A buffer the size of one message makes
 * the next write wait for the peer's acknowledgement of the first: a
 * round trip, or 40 ms where the kernel delays it (measured at np 2
 * with 16 KiB inline: a 32 KiB allreduce, a head and a tail, took 40 ms;
 * 4 KiB took 27 us where 8 KiB took 11).
 * After each such message the channel sets the buffer back to this
 * (doubled by the kernel, within net.core.wmem_max). */
constexpr int kAgreeSendBuffer = 256 * 1024;

struct AgreeChannel {
  std::shared_ptr<gloo::rendezvous::Context> context;
  std::mutex mutex;
  size_t inline_bytes = 0;          // agree_inline
  size_t box_bytes = 0;             // kAgreeTotalBytes + inline_bytes
  std::vector<unsigned char> inbox;   // box_bytes per rank
  std::vector<unsigned char> outbox;  // box_bytes
  std::vector<size_t> sent_max;     // per rank: the largest message sent
  std::vector<std::unique_ptr<gloo::transport::Buffer>> in, out;
  bool primed = false;  // see prime_ring
  std::vector<unsigned char> scratch;  // a pipelined allreduce's incoming piece
  std::vector<unsigned char> dropped;  // the cut-off end of a longer message
  int peer = -1;        // the rank a pipelined step writes to or reads from
  std::vector<int> fds;  // per rank: its pair's socket (-1: not found)
  bool own_reads = false;  // every rank found every socket (channels_found)
};

/* The messages' channel: a third full mesh, whose sockets pdmpi reads and
 * writes itself (the pairs are put in gloo's synchronous mode, so gloo's
 * loop thread leaves them alone, and never used through gloo). A sender
 * writes the header and the payload in one sendmsg from its own thread,
 * under a per-peer lock; the receiving thread polls every peer's socket
 * and reads what comes. No gloo loop thread and no rendezvous stand
 * between a send and its delivery (on the asynchronous pairs: an
 * announcement, its answer, then the data, through both sides' loop
 * threads), and a socket is read and written at once, by two threads,
 * without a lock between them: a sender blocked on a full socket never
 * keeps its own rank from reading. Used only where every rank of the
 * communicator found its pairs' sockets (pair_sockets); else messages
 * take the asynchronous pairs. */
struct P2PChannel {
  bool active = false;
  std::shared_ptr<gloo::rendezvous::Context> context;  // owns the sockets
  std::vector<int> fds;  // per rank
  std::vector<std::unique_ptr<std::mutex>> send_mutex;
  int stop_fd = -1;  // an eventfd the receiving thread polls too
  int timeout_ms = 0;
};

/* The peer closed its end of a channel socket, or it broke. */
struct ChannelClosed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/* Before a blocking read on a synchronous pair: poll its socket, yielding
 * the processor between looks, for up to kPollBeforeSleep. A thread
 * asleep in read() is woken by its peer's data only once the kernel
 * schedules it, and on a virtual machine whose processors all went idle
 * that first wakes the processor (tens of microseconds per message, at
 * every step of a collective); a thread that yields keeps its processor
 * awake and still lets every other rank of the host run. */
constexpr auto kPollBeforeSleep = std::chrono::milliseconds(1);

/* poll(fds, n, 0) with yields between looks until one is ready or
 * kPollBeforeSleep has passed: poll's result (0: nothing came). */
static int poll_yielding(struct pollfd* fds, nfds_t n) {
  const auto start = std::chrono::steady_clock::now();
  for (unsigned i = 1;; i++) {
    int ready = poll(fds, n, 0);
    if (ready != 0 ||
        (i % 16 == 0 &&
         std::chrono::steady_clock::now() - start > kPollBeforeSleep))
      return ready;
    sched_yield();
  }
}

/* Wait until one of fds is ready for its events, up to timeout_ms: false
 * on timeout. It looks with yields first (poll_yielding), as a reader of
 * a synchronous pair does: the channels' sockets are read and written
 * without blocking, so a message that fills the socket is waited for
 * here, piece by piece. */
static bool wait_any(struct pollfd* fds, nfds_t n, int timeout_ms) {
  if (poll_yielding(fds, n) > 0)
    return true;
  for (;;) {
    int ready = poll(fds, n, timeout_ms);
    if (ready > 0)
      return true;
    if (ready == 0)
      return false;
    if (errno != EINTR)
      throw std::runtime_error(std::string("poll: ") + strerror(errno));
  }
}

static bool wait_ready(int fd, short events, int timeout_ms) {
  struct pollfd p = {fd, events, 0};
  return wait_any(&p, 1, timeout_ms);
}

/* One write of iov[0..n) without waiting: the bytes taken (0: the
 * socket is full, or a signal came first); a closed connection or an
 * error thrown. */
static size_t write_some(int fd, struct iovec* iov, int n) {
  struct msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = static_cast<size_t>(n);
  ssize_t w = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (w >= 0)
    return static_cast<size_t>(w);
  if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
    return 0;
  if (errno == EPIPE || errno == ECONNRESET)
    throw ChannelClosed("connection closed by the peer");
  throw std::runtime_error(std::string("write: ") + strerror(errno));
}

/* One read of up to n bytes without waiting: the bytes read (0: none
 * had come, or a signal came first); a closed connection or an error
 * thrown. */
static size_t read_some(int fd, void* at, size_t n) {
  ssize_t r = recv(fd, at, n, MSG_DONTWAIT);
  if (r > 0)
    return static_cast<size_t>(r);
  if (r == 0)
    throw ChannelClosed("connection closed by the peer");
  if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
    return 0;
  if (errno == ECONNRESET)
    throw ChannelClosed("connection reset by the peer");
  throw std::runtime_error(std::string("read: ") + strerror(errno));
}

static void channel_write(int fd, struct iovec* iov, int n, int timeout_ms) {
  while (n > 0) {
    size_t done = write_some(fd, iov, n);
    if (done == 0) {
      if (!wait_ready(fd, POLLOUT, timeout_ms))
        throw std::runtime_error("write timed out (the peer took nothing "
                                 "within PDMPI_TIMEOUT)");
      continue;
    }
    while (n > 0 && done >= iov->iov_len) {
      done -= iov->iov_len;
      iov++;
      n--;
    }
    if (n > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + done;
      iov->iov_len -= done;
    }
  }
}

/* Payloads from this size are acknowledged as they are read. */
constexpr size_t kQuickAckBytes = 64 * 1024;

/* Acknowledge what fd has taken now. The kernel delays acknowledgements
 * on a connection where each side answers the other (point-to-point's
 * usual pattern), and a sender whose data is not acknowledged soon waits
 * for room in its socket. Measured 2026-12-04, np 2 with PDMPI_SHM=0, a
 * ping-pong of MPI_Send and MPI_Recv: 1 MiB took 250-310 us a message,
 * 130-160 with this after every read of its payload (Open MPI over TCP:
 * 130), 2 MiB 440-450 and 250 (Open MPI: 300); two bare sockets showed
 * the same (230-245 us, 126-128 with it). The setting lasts only until
 * the kernel goes back to delaying, so it is made after every read. */
static void quick_ack(int fd) {
  int on = 1;
  (void)setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &on, sizeof(on));
}

static void channel_read(int fd, void* buf, size_t bytes, int timeout_ms) {
  char* at = static_cast<char*>(buf);
  const bool ack_each = bytes >= kQuickAckBytes;
  while (bytes > 0) {
    size_t r = read_some(fd, at, bytes);
    if (r == 0) {
      if (!wait_ready(fd, POLLIN, timeout_ms))
        throw ChannelClosed("the peer stopped within a message");
      continue;
    }
    at += r;
    bytes -= r;
    if (ack_each)
      quick_ack(fd);
  }
}

struct pd_backend_comm {
  std::shared_ptr<gloo::rendezvous::Context> context;
  AgreeChannel agree;
  P2PChannel p2p;
  int rank;
  int size;
  std::chrono::milliseconds timeout;
  /* point-to-point: the receiving thread (see receive_loop) */
  std::thread receiver;
  std::mutex receiver_mutex;
  bool receiver_stopping = false;
  gloo::transport::UnboundBuffer* receiver_waiting = nullptr;
};

namespace {

/* Call fn.template operator()<Elem<N>>() for the element size, or report
 * that gloo cannot move elements of that size as a unit. */
template <typename Fn>
int with_elem_type(size_t elem_size, Fn&& fn) {
  switch (elem_size) {
    case 1: return fn(Elem<1>{});
    case 2: return fn(Elem<2>{});
    case 4: return fn(Elem<4>{});
    case 8: return fn(Elem<8>{});
    case 16: return fn(Elem<16>{});
    case 32: return fn(Elem<32>{});
    default: return PD_BACKEND_ERR_UNSUPPORTED;
  }
}

/* gloo's reduction callback, carrying the kernel's context along. */
std::function<void(void*, const void*, const void*, size_t)> reduce_function(
    const pd_coll_args* a) {
  pd_reduce_fn fn = a->reduce;
  const void* ctx = a->reduce_ctx;
  return [fn, ctx](void* out, const void* x, const void* y, size_t n) {
    fn(out, x, y, n, ctx);
  };
}

/* The socket of a connected pair of the agreement's channel. gloo keeps
 * it private; the pair's local address (its socket's, once connected)
 * names it among the process's sockets. */
bool same_address(const sockaddr_storage& a, const sockaddr_storage& b) {
  if (a.ss_family != b.ss_family)
    return false;
  if (a.ss_family == AF_INET) {
    auto& x = reinterpret_cast<const sockaddr_in&>(a);
    auto& y = reinterpret_cast<const sockaddr_in&>(b);
    return x.sin_port == y.sin_port &&
           x.sin_addr.s_addr == y.sin_addr.s_addr;
  }
  if (a.ss_family == AF_INET6) {
    auto& x = reinterpret_cast<const sockaddr_in6&>(a);
    auto& y = reinterpret_cast<const sockaddr_in6&>(b);
    return x.sin6_port == y.sin6_port &&
           memcmp(&x.sin6_addr, &y.sin6_addr, sizeof(x.sin6_addr)) == 0;
  }
  return false;
}

/* The sockets of pairs (one scan of the process's sockets for all):
 * fds[i] for pairs[i], -1 where not exactly one socket matches. */
std::vector<int> pair_sockets(
    const std::vector<const gloo::transport::Pair*>& pairs) {
  std::vector<int> fds(pairs.size(), -1);
  std::vector<int> matches(pairs.size(), 0);
  std::vector<const sockaddr_storage*> want(pairs.size(), nullptr);
  for (size_t i = 0; i < pairs.size(); i++) {
    auto* tcp = pairs[i] == nullptr
                    ? nullptr
                    : dynamic_cast<const gloo::transport::tcp::Address*>(
                          &pairs[i]->address());
    if (tcp != nullptr)
      want[i] = &tcp->getSockaddr();
  }
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr)
    return fds;
  while (struct dirent* e = readdir(dir)) {
    char* end;
    long fd = strtol(e->d_name, &end, 10);
    if (*end != '\0' || fd < 0 || fd == dirfd(dir))
      continue;
    sockaddr_storage local{}, peer{};
    socklen_t n = sizeof(local), m = sizeof(peer);
    if (getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&local),
                    &n) != 0 ||
        getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&peer),
                    &m) != 0)
      continue;  // not a socket, or not a connected one
    for (size_t i = 0; i < pairs.size(); i++) {
      if (want[i] != nullptr && same_address(local, *want[i])) {
        fds[i] = static_cast<int>(fd);
        matches[i]++;
      }
    }
  }
  closedir(dir);
  for (size_t i = 0; i < pairs.size(); i++)
    if (matches[i] != 1)
      fds[i] = -1;
  return fds;
}

/* Data, a closed connection or an error on fd (read() says which), or
 * kPollBeforeSleep gone by. */
void await_readable(int fd) {
  if (fd < 0)
    return;
  struct pollfd p = {fd, POLLIN, 0};
  poll_yielding(&p, 1);
}

/* After a message of nbytes to rank r on the agreement's channel: the
 * send buffer back to kAgreeSendBuffer if gloo may have set it to that
 * message (one larger than any before on the pair). */
void hold_send_buffer(AgreeChannel& ch, int r, size_t nbytes) {
  if (nbytes <= ch.sent_max[r] || ch.fds.empty() || ch.fds[r] < 0)
    return;
  ch.sent_max[r] = nbytes;
  int want = kAgreeSendBuffer;
  (void)setsockopt(ch.fds[r], SOL_SOCKET, SO_SNDBUF, &want, sizeof(want));
}

/* Unbound-buffer messages live in a slot space of their own, clear of
 * the prefixes gloo's collectives use (1..8). */
constexpr uint8_t kExchangeSlotPrefix = 0x21;
/* The agreement channel's slots: the head, registered once per pair,
 * and the tail of a long message, registered for its one message. */
constexpr int kAgreeSlot = 0x24;
constexpr int kAgreeTailSlot = 0x25;

int unsupported_size(pd_backend_error* err, const char* what, size_t size) {
  snprintf(err->msg, sizeof(err->msg),
           "gloo %s: elements of %zu bytes are not supported", what, size);
  return PD_BACKEND_ERR_UNSUPPORTED;
}

}  // namespace

extern "C" {

static void p2p_connect(pd_backend_comm* comm, gloo::rendezvous::Store& store,
                        std::shared_ptr<gloo::transport::Device>& dev);
static void channels_found(pd_backend_comm* comm);

static int pd_gloo_comm_create(const pd_backend_comm_init* init,
                               pd_backend_comm** out, pd_backend_error* err) {
  try {
    auto dev = get_device(init->bind_host, init->bind_iface);
    auto comm = std::make_unique<pd_backend_comm>();
    comm->rank = init->rank;
    comm->size = init->size;
    comm->timeout = std::chrono::milliseconds(init->timeout_ms);
    PdStore store(init->store, init->store_prefix, init->timeout_ms);
    comm->context =
        std::make_shared<gloo::rendezvous::Context>(init->rank, init->size);
    /* Must precede connectFullMesh: it is copied into the transport. */
    comm->context->setTimeout(comm->timeout);
    comm->context->connectFullMesh(store, dev);
    if (init->size > 1) {
      PdStore agree_store(init->store,
                          std::string(init->store_prefix) + "/agree",
                          init->timeout_ms);
      auto& ch = comm->agree;
      ch.context =
          std::make_shared<gloo::rendezvous::Context>(init->rank, init->size);
      ch.context->setTimeout(comm->timeout);
      ch.context->connectFullMesh(agree_store, dev);
      ch.inline_bytes = agree_inline(init->size);
      ch.box_bytes = kAgreeTotalBytes + ch.inline_bytes;
      ch.inbox.resize(static_cast<size_t>(init->size) * ch.box_bytes);
      ch.outbox.resize(ch.box_bytes);
      ch.sent_max.assign(init->size, 0);
      ch.in.resize(init->size);
      ch.out.resize(init->size);
      for (int r = 0; r < init->size; r++) {
        if (r == init->rank)
          continue;
        auto& pair = ch.context->getPair(r);
        pair->setSync(true, false);
        ch.in[r] = pair->createRecvBuffer(
            kAgreeSlot, ch.inbox.data() + static_cast<size_t>(r) * ch.box_bytes,
            ch.box_bytes);
        ch.out[r] = pair->createSendBuffer(kAgreeSlot, ch.outbox.data(),
                                           ch.box_bytes);
      }
      if (init->p2p_sockets) {
        PdStore p2p_store(init->store,
                          std::string(init->store_prefix) + "/p2p",
                          init->timeout_ms);
        p2p_connect(comm.get(), p2p_store, dev);
      }
      /* Both meshes' sockets in one scan: ranks 0..size-1 are the
       * agreement's, size..2*size-1 the messages'. */
      std::vector<const gloo::transport::Pair*> pairs(2 * init->size,
                                                      nullptr);
      for (int r = 0; r < init->size; r++) {
        if (r == init->rank)
          continue;
        pairs[r] = ch.context->getPair(r).get();
        if (comm->p2p.context)
          pairs[init->size + r] = comm->p2p.context->getPair(r).get();
      }
      std::vector<int> fds = pair_sockets(pairs);
      ch.fds.assign(fds.begin(), fds.begin() + init->size);
      if (comm->p2p.context)
        comm->p2p.fds.assign(fds.begin() + init->size, fds.end());
      channels_found(comm.get());
    }
    *out = comm.release();
    return PD_BACKEND_OK;
  } catch (const std::exception& e) {
    return fail(err, "connect", e);
  }
}

static void pd_gloo_p2p_stop(pd_backend_comm* comm);

static void pd_gloo_comm_destroy(pd_backend_comm* comm) {
  try {
    pd_gloo_p2p_stop(comm);
    delete comm;
  } catch (...) {
  }
}

}  // extern "C"

namespace {

/* ---- pipelined steps on the agreement's synchronous pairs -----------
 *
 * gloo's own algorithms run on asynchronous pairs, where every message
 * is a rendezvous through both sides' loop threads; on 2-4 ranks they
 * took 0.4-2 ms for a 128 KiB-1 MiB allreduce that moves in a tenth of
 * that (bench/results/compare-tcp-np*). These move the data on the
 * calling thread instead, in pieces of at most kPiece bytes, each
 * written before the matching one is read: a rank is never more than
 * two pieces ahead of the peer that reads them, and the socket buffer
 * holds more than that (prime_ring), so no write waits for a read and
 * the ring cannot deadlock.
 *
 * 60 KiB a piece. Measured 2026-12-04 on the 2-core build machine, pdmpi
 * alone, piece sizes alternating, medians of three runs of osu_allreduce
 * and osu_bcast at 1-16 MiB: with PDMPI_SHM=0 at np 4 on one host,
 * pieces of 128 KiB took 1.6-1.8x the time of 60 KiB in allreduce and
 * 1.7-2.5x in broadcast (np 2 broadcast: 2.9-3.2x; np 2 allreduce:
 * level), and between two network-namespace hosts (2 + 2, a veth pair)
 * 1.4-1.8x and 1.3-2.1x. Pieces of 64 and 32 KiB were slow too, 48, 60,
 * 63.5 and 127 KiB fast: what is slow is a piece whose header (gloo's
 * preamble, a few dozen bytes) carries it just past a multiple of 32
 * KiB, the loopback's segment size here. Why is not established (the
 * kernel's tcp_autocorking off changed nothing). */
constexpr size_t kPiece = 60 * 1024;

/* Slots of the pipelined steps' one receive per pair at a time. */
constexpr int kPipeSlot = 0x26;

gloo::transport::Pair& sync_pair(pd_backend_comm* comm, int r) {
  return *comm->agree.context->getPair(r);
}

/* gloo sizes a pair's send buffer to the largest message it has sent,
 * and the kernel accounts more than the payload against it: pieces of
 * that size block on the peer's acknowledgements, which the kernel may
 * delay by 40 ms on a connection it takes for interactive (measured:
 * 44 ms stalls at np 2-4). One message of kPrime bytes to the next rank,
 * the first time the pieces run on a communicator, sets a buffer that
 * holds more than two pieces (the kernel doubles the request up to
 * net.core.wmem_max, 208 KiB by default: 416 KiB). Rank 0 reads before it
 * writes and the others write first, so the ring of these writes
 * completes even where the buffer is smaller than the message. */
constexpr size_t kPrime = 256 * 1024;

void prime_ring(pd_backend_comm* comm) {
  AgreeChannel& ch = comm->agree;
  if (ch.primed)
    return;
  const int p = comm->size;
  const int right = (comm->rank + 1) % p, left = (comm->rank + p - 1) % p;
  std::vector<unsigned char> bytes(kPrime);
  auto out = sync_pair(comm, right).createSendBuffer(kPipeSlot, bytes.data(),
                                                     kPrime);
  for (int turn = 0; turn < 2; turn++) {
    if ((turn == 0) == (comm->rank == 0)) {
      ch.peer = left;
      auto in = sync_pair(comm, left).createRecvBuffer(kPipeSlot, bytes.data(),
                                                       kPrime);
      await_readable(ch.fds[left]);
      in->waitRecv();
    } else {
      ch.peer = right;
      out->send(0, kPrime, 0);
      out->waitSend();
    }
  }
  ch.primed = true;
}

/* Send [from, from + bytes) to right while taking as many bytes from
 * left into the buffer `into` (registered once for the step); each
 * received piece is passed to got(offset, length) as it lands. Pieces
 * are whole elements of elem bytes. */
template <typename Got>
void sendrecv_pieces(pd_backend_comm* comm, int right, const void* from,
                     size_t send_bytes, int left, void* into,
                     size_t recv_bytes, size_t elem, bool in_place, Got got) {
  size_t piece = std::max(elem, kPiece / elem * elem);
  std::unique_ptr<gloo::transport::Buffer> out, in;
  if (send_bytes > 0)
    out = sync_pair(comm, right).createSendBuffer(
        kPipeSlot, const_cast<void*>(from), send_bytes);
  if (recv_bytes > 0)
    in = sync_pair(comm, left).createRecvBuffer(
        kPipeSlot, into, in_place ? recv_bytes : std::min(piece, recv_bytes));
  size_t sent = 0, taken = 0;
  while (sent < send_bytes || taken < recv_bytes) {
    if (sent < send_bytes) {
      size_t n = std::min(piece, send_bytes - sent);
      comm->agree.peer = right;
      out->send(sent, n, in_place ? sent : 0);
      out->waitSend();
      sent += n;
    }
    if (taken < recv_bytes) {
      size_t n = std::min(piece, recv_bytes - taken);
      comm->agree.peer = left;
      await_readable(comm->agree.fds[left]);
      in->waitRecv();
      got(taken, n);
      taken += n;
    }
  }
}

/* Where block i (0..size; size: the end) of count elements split in
 * size blocks begins. */
size_t block_begin(size_t count, int size, int i) {
  return count / size * i + std::min<size_t>(i, count % size);
}

/* The input is read where it is: the first step sends this rank's own
 * block and every step reduces the block it receives from the input into
 * the output, so no block of the output needs the input copied in first
 * (the allgather writes the one block, this rank's, that the
 * reduce-scatter does not). */
void pipelined_allreduce(pd_backend_comm* comm, const pd_coll_args* a) {
  const size_t e = a->elem_size;
  unsigned char* buf = static_cast<unsigned char*>(a->recvbuf);
  const unsigned char* in =
      a->sendbuf != nullptr ? static_cast<const unsigned char*>(a->sendbuf)
                            : buf;
  const int p = comm->size, me = comm->rank;
  const int right = (me + 1) % p, left = (me + p - 1) % p;
  auto begin = [&](int i) { return block_begin(a->count, p, (i % p + p) % p); };
  auto end_of = [&](int i) {
    return block_begin(a->count, p, (i % p + p) % p + 1);
  };
  std::vector<unsigned char>& scratch = comm->agree.scratch;
  if (scratch.size() < std::max(e, kPiece / e * e))
    scratch.resize(std::max(e, kPiece / e * e));
  /* Reduce-scatter: after p-1 steps block me+1 holds every rank's sum. */
  for (int s = 0; s < p - 1; s++) {
    int sb = me - s, rb = me - s - 1;
    size_t so = begin(sb), sn = end_of(sb) - so;
    size_t ro = begin(rb), rn = end_of(rb) - ro;
    unsigned char* dst = buf + ro * e;
    const unsigned char* mine = in + ro * e;
    sendrecv_pieces(comm, right, (s == 0 ? in : buf) + so * e, sn * e, left,
                    scratch.data(), rn * e, e, false,
                    [&](size_t off, size_t n) {
                      a->reduce(dst + off, mine + off, scratch.data(), n / e,
                                a->reduce_ctx);
                    });
  }
  /* Allgather of the reduced blocks. */
  for (int s = 0; s < p - 1; s++) {
    int sb = me + 1 - s, rb = me - s;
    size_t so = begin(sb), sn = end_of(sb) - so;
    size_t ro = begin(rb), rn = end_of(rb) - ro;
    sendrecv_pieces(comm, right, buf + so * e, sn * e, left, buf + ro * e,
                    rn * e, e, true, [](size_t, size_t) {});
  }
}

void pipelined_allgather(pd_backend_comm* comm, const pd_coll_args* a) {
  const size_t bytes = a->count * a->elem_size;
  unsigned char* buf = static_cast<unsigned char*>(a->recvbuf);
  const int p = comm->size, me = comm->rank;
  if (a->sendbuf != nullptr)
    memmove(buf + me * bytes, a->sendbuf, bytes);
  const int right = (me + 1) % p, left = (me + p - 1) % p;
  for (int s = 0; s < p - 1; s++) {
    int sb = ((me - s) % p + p) % p, rb = ((me - s - 1) % p + p) % p;
    sendrecv_pieces(comm, right, buf + sb * bytes, bytes, left,
                    buf + rb * bytes, bytes, 1, true, [](size_t, size_t) {});
  }
}

/* The chain on the agreement's sockets read and written here, without
 * gloo's framing (every rank's channel found its sockets: own_reads):
 * each rank takes what has come from the one before it, acknowledges it
 * at once, and passes it on. The connection carries the agreement's
 * records both ways before and after, and the kernel delays its
 * acknowledgements on such a connection; through gloo, which reads a
 * piece whole, they could be asked for only after each piece, and the
 * root waited for room in its socket. Measured 2026-12-04, osu_bcast of
 * 1 MiB at np 2 with PDMPI_SHM=0, five alternating runs against the
 * pieces through gloo and Open MPI over TCP: 111.8-123.5 us (median
 * 117.1), 130.0-143.4 (132.8), 116.8-132.1 (121.0). */
void chain_bcast_own(pd_backend_comm* comm, const pd_coll_args* a) {
  const size_t bytes = a->count * a->elem_size;
  unsigned char* buf = static_cast<unsigned char*>(a->recvbuf);
  const int p = comm->size;
  const int pos = (comm->rank - a->root + p) % p;  // place in the chain
  const int next = (comm->rank + 1) % p, prev = (comm->rank + p - 1) % p;
  const bool last = pos == p - 1;
  const int from = pos == 0 ? -1 : comm->agree.fds[prev];
  const int to = last ? -1 : comm->agree.fds[next];
  const int timeout_ms = static_cast<int>(comm->timeout.count());
  size_t got = from < 0 ? bytes : 0, sent = last ? bytes : 0;
  while (got < bytes || sent < bytes) {
    size_t moved = 0;
    if (got < bytes) {
      comm->agree.peer = prev;
      size_t r = read_some(from, buf + got, bytes - got);
      if (r > 0)
        quick_ack(from);
      got += r;
      moved += r;
    }
    if (sent < got) {
      comm->agree.peer = next;
      struct iovec iov = {buf + sent, got - sent};
      size_t w = write_some(to, &iov, 1);
      sent += w;
      moved += w;
    }
    if (moved > 0)
      continue;
    /* Nothing came and nothing could go: wait for either. */
    struct pollfd fds[2];
    nfds_t n = 0;
    if (got < bytes)
      fds[n++] = {from, POLLIN, 0};
    if (sent < got)
      fds[n++] = {to, POLLOUT, 0};
    if (!wait_any(fds, n, timeout_ms))
      throw std::runtime_error("timed out (nothing moved within "
                               "PDMPI_TIMEOUT)");
  }
}

/* A chain from the root: each rank takes a piece from the one before it
 * and passes it on, so all links carry pieces at once. */
void pipelined_bcast(pd_backend_comm* comm, const pd_coll_args* a) {
  if (comm->agree.own_reads)
    return chain_bcast_own(comm, a);
  const size_t bytes = a->count * a->elem_size;
  unsigned char* buf = static_cast<unsigned char*>(a->recvbuf);
  const int p = comm->size;
  const int pos = (comm->rank - a->root + p) % p;  // place in the chain
  const int next = (comm->rank + 1) % p, prev = (comm->rank + p - 1) % p;
  const bool first = pos == 0, last = pos == p - 1;
  std::unique_ptr<gloo::transport::Buffer> out, in;
  if (!last)
    out = sync_pair(comm, next).createSendBuffer(kPipeSlot, buf, bytes);
  if (!first)
    in = sync_pair(comm, prev).createRecvBuffer(kPipeSlot, buf, bytes);
  for (size_t off = 0; off < bytes; off += kPiece) {
    size_t n = std::min(kPiece, bytes - off);
    if (!first) {
      comm->agree.peer = prev;
      await_readable(comm->agree.fds[prev]);
      in->waitRecv();
    }
    if (!last) {
      comm->agree.peer = next;
      out->send(off, n, off);
      out->waitSend();
    }
  }
}

/* Run one of the above under the channel's lock, as a backend status. */
template <typename Fn>
int pipelined(pd_backend_comm* comm, const char* what, pd_backend_error* err,
              Fn fn) {
  if (comm->size < 2 || !comm->agree.context)
    return PD_BACKEND_ERR_UNSUPPORTED;
  std::lock_guard<std::mutex> lock(comm->agree.mutex);
  try {
    comm->agree.peer = -1;
    prime_ring(comm);
    fn();
    return PD_BACKEND_OK;
  } catch (const std::exception& e) {
    /* A lost connection is the peer's; a timeout in a ring or chain
     * names no one: the neighbour waited for may itself wait for a rank
     * further on (core then asks the ranks which of them still answer). */
    int status = fail(err, what, e);
    if (status != PD_BACKEND_ERR_TIMEOUT)
      err->peer = comm->agree.peer;
    return status;
  }
}

}  // namespace

extern "C" {

static int pd_gloo_allreduce(pd_backend_comm* comm, const pd_coll_args* a,
                             pd_backend_error* err) {
  if (a->count == 0)
    return PD_BACKEND_OK;
  if (a->algorithm == PD_ALGO_PIPELINED)
    return pipelined(comm, "allreduce", err,
                     [&] { pipelined_allreduce(comm, a); });
  try {
    int rc = with_elem_type(a->elem_size, [&](auto elem) {
      using T = decltype(elem);
      gloo::AllreduceOptions opts(comm->context);
      if (a->sendbuf != nullptr && a->sendbuf != a->recvbuf)
        opts.setInput(static_cast<T*>(const_cast<void*>(a->sendbuf)), a->count);
      opts.setOutput(static_cast<T*>(a->recvbuf), a->count);
      opts.setReduceFunction(reduce_function(a));
      opts.setTag(a->tag);
      opts.setTimeout(comm->timeout);
      if (a->algorithm == PD_ALGO_RING)
        opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
      else if (a->algorithm == PD_ALGO_BCUBE)
        opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::BCUBE);
      gloo::allreduce(opts);
      return static_cast<int>(PD_BACKEND_OK);
    });
    if (rc == PD_BACKEND_ERR_UNSUPPORTED)
      return unsupported_size(err, "allreduce", a->elem_size);
    return rc;
  } catch (const std::exception& e) {
    return fail(err, "allreduce", e);
  }
}

static int pd_gloo_reduce(pd_backend_comm* comm, const pd_coll_args* a,
                          pd_backend_error* err) {
  if (a->count == 0)
    return PD_BACKEND_OK;
  try {
    /* gloo needs a full-size output on every rank, root or not. */
    void* output = a->recvbuf;
    std::vector<unsigned char> scratch;  // per call: calls may overlap
    if (comm->rank != a->root) {
      scratch.resize(a->count * a->elem_size);
      output = scratch.data();
    }
    int rc = with_elem_type(a->elem_size, [&](auto elem) {
      using T = decltype(elem);
      gloo::ReduceOptions opts(comm->context);
      if (a->sendbuf != nullptr && a->sendbuf != output)
        opts.setInput(static_cast<T*>(const_cast<void*>(a->sendbuf)), a->count);
      opts.setOutput(static_cast<T*>(output), a->count);
      opts.setRoot(a->root);
      opts.setReduceFunction(reduce_function(a));
      opts.setTag(a->tag);
      opts.setTimeout(comm->timeout);
      gloo::reduce(opts);
      return static_cast<int>(PD_BACKEND_OK);
    });
    if (rc == PD_BACKEND_ERR_UNSUPPORTED)
      return unsupported_size(err, "reduce", a->elem_size);
    return rc;
  } catch (const std::exception& e) {
    return fail(err, "reduce", e);
  }
}

static int pd_gloo_bcast(pd_backend_comm* comm, const pd_coll_args* a,
                         pd_backend_error* err) {
  if (a->count == 0)
    return PD_BACKEND_OK;
  if (a->algorithm == PD_ALGO_PIPELINED)
    return pipelined(comm, "broadcast", err,
                     [&] { pipelined_bcast(comm, a); });
  try {
    /* Bytes are enough: a broadcast never splits elements. */
    gloo::BroadcastOptions opts(comm->context);
    opts.setOutput(static_cast<unsigned char*>(a->recvbuf),
                   a->count * a->elem_size);
    opts.setRoot(a->root);
    opts.setTag(a->tag);
    opts.setTimeout(comm->timeout);
    gloo::broadcast(opts);
    return PD_BACKEND_OK;
  } catch (const std::exception& e) {
    return fail(err, "broadcast", e);
  }
}

static int pd_gloo_allgather(pd_backend_comm* comm, const pd_coll_args* a,
                             pd_backend_error* err) {
  if (a->count == 0)
    return PD_BACKEND_OK;
  if (a->algorithm == PD_ALGO_PIPELINED)
    return pipelined(comm, "allgather", err,
                     [&] { pipelined_allgather(comm, a); });
  try {
    size_t bytes = a->count * a->elem_size;
    gloo::AllgatherOptions opts(comm->context);
    if (a->sendbuf != nullptr)
      opts.setInput(static_cast<unsigned char*>(const_cast<void*>(a->sendbuf)),
                    bytes);
    opts.setOutput(static_cast<unsigned char*>(a->recvbuf),
                   bytes * static_cast<size_t>(comm->size));
    opts.setTag(a->tag);
    opts.setTimeout(comm->timeout);
    gloo::allgather(opts);
    return PD_BACKEND_OK;
  } catch (const std::exception& e) {
    return fail(err, "allgather", e);
  }
}

static int pd_gloo_barrier(pd_backend_comm* comm, uint32_t tag,
                           pd_backend_error* err) {
  try {
    gloo::BarrierOptions opts(comm->context);
    opts.setTag(tag);
    opts.setTimeout(comm->timeout);
    gloo::barrier(opts);
    return PD_BACKEND_OK;
  } catch (const std::exception& e) {
    return fail(err, "barrier", e);
  }
}

}  // extern "C"

namespace {

/* A wait of exchange_on that failed, and the peer it was for. */
struct PeerFailure : std::runtime_error {
  PeerFailure(const std::string& what, int peer_rank)
      : std::runtime_error(what), peer(peer_rank) {}
  int peer;
};

/* Post every receive before any send, then every send, so no rank waits
 * on a peer that is itself waiting to receive; then wait for all. */
void exchange_on(pd_backend_comm* comm, uint8_t prefix, const pd_p2p_op* ops,
                 size_t n, uint32_t tag) {
  const uint64_t slot = gloo::Slot::build(prefix, tag);
  std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> bufs;
  bufs.reserve(n);
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < n; i++) {
      const pd_p2p_op& op = ops[i];
      if ((pass == 0) == (op.is_send != 0))
        continue;
      bufs.push_back(comm->context->createUnboundBuffer(op.buf, op.bytes));
      if (op.is_send)
        bufs.back()->send(op.peer, slot, 0, op.bytes);
      else
        bufs.back()->recv(op.peer, slot, 0, op.bytes);
    }
  }
  size_t k = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < n; i++) {
      if ((pass == 0) == (ops[i].is_send != 0))
        continue;
      bool done;
      try {
        done = ops[i].is_send ? bufs[k]->waitSend(comm->timeout)
                              : bufs[k]->waitRecv(comm->timeout);
      } catch (const std::exception& e) {
        throw PeerFailure(e.what(), ops[i].peer);
      }
      k++;
      if (!done)
        throw PeerFailure("message to/from rank " +
                              std::to_string(ops[i].peer) + " aborted",
                          ops[i].peer);
    }
  }
}

}  // namespace

extern "C" {

static int pd_gloo_exchange(pd_backend_comm* comm, const pd_p2p_op* ops,
                            size_t n, uint32_t tag, pd_backend_error* err) {
  try {
    exchange_on(comm, kExchangeSlotPrefix, ops, n, tag);
    return PD_BACKEND_OK;
  } catch (const PeerFailure& e) {
    err->peer = e.peer;
    return fail(err, "exchange", e);
  } catch (const std::exception& e) {
    return fail(err, "exchange", e);
  }
}

}  // extern "C"

namespace {

/* The first part of a record and its data, in the outbox: the total
 * length, then up to inline_bytes bytes. */
size_t agree_fill(AgreeChannel& ch, const void* data, size_t bytes) {
  size_t head = std::min(bytes, ch.inline_bytes);
  uint64_t total = bytes;
  memcpy(ch.outbox.data(), &total, sizeof(total));
  memcpy(ch.outbox.data() + kAgreeTotalBytes, data, head);
  return head;
}

/* The filled outbox to rank r, and the rest of data, if any, as a second
 * message. */
void agree_send(AgreeChannel& ch, int r, const void* data, size_t bytes,
                size_t head) {
  ch.out[r]->send(0, kAgreeTotalBytes + head, 0);
  ch.out[r]->waitSend();
  if (bytes > head) {
    auto tail = ch.context->getPair(r)->createSendBuffer(
        kAgreeTailSlot, static_cast<char*>(const_cast<void*>(data)) + head,
        bytes - head);
    tail->send(0, bytes - head, 0);
    tail->waitSend();
  }
  hold_send_buffer(ch, r, std::max(kAgreeTotalBytes + head, bytes - head));
}

/* body(peer) under the channel's lock; an exception is the agreement's
 * failure, naming the rank body last set in peer. */
template <typename Body>
int agree_locked(pd_backend_comm* comm, pd_backend_error* err, Body body) {
  std::lock_guard<std::mutex> lock(comm->agree.mutex);
  int peer = -1;
  try {
    body(peer);
    return PD_BACKEND_OK;
  } catch (const std::exception& e) {
    err->peer = peer;
    return fail(err, "agreement on the call", e);
  }
}

/* data to every peer, or to `only` alone (-1: every peer); *peer is the
 * rank being written to, for a failure's report. */
void agree_send_all(pd_backend_comm* comm, const void* data, size_t bytes,
                    int only, int* peer) {
  AgreeChannel& ch = comm->agree;
  size_t head = agree_fill(ch, data, bytes);
  for (int r = 0; r < comm->size; r++) {
    if (r == comm->rank || (only >= 0 && r != only))
      continue;
    *peer = r;
    agree_send(ch, r, data, bytes, head);
  }
}

/* Rank r's next message into slot: its first stride bytes, zeros after
 * a shorter one; the rest of a longer one (a rank in another call) is
 * read and dropped. */
void agree_receive(AgreeChannel& ch, int r, char* slot, size_t stride) {
  await_readable(ch.fds[r]);
  ch.in[r]->waitRecv();
  const unsigned char* box =
      ch.inbox.data() + static_cast<size_t>(r) * ch.box_bytes;
  uint64_t total64;
  memcpy(&total64, box, sizeof(total64));
  size_t total = static_cast<size_t>(total64);
  size_t got = std::min(total, ch.inline_bytes);
  memcpy(slot, box + kAgreeTotalBytes, std::min(got, stride));
  if (total > got) {
    size_t rest = total - got;
    void* into = slot + got;
    if (total > stride) {
      ch.dropped.resize(rest);
      into = ch.dropped.data();
    }
    auto tail =
        ch.context->getPair(r)->createRecvBuffer(kAgreeTailSlot, into, rest);
    /* Polled for first, as the head was: the tail is often still on its
     * way, and a read that blocks sleeps in the kernel. */
    await_readable(ch.fds[r]);
    tail->waitRecv();
    if (total > stride && stride > got)
      memcpy(slot + got, ch.dropped.data(), stride - got);
  }
  if (total < stride)
    memset(slot + total, 0, stride - total);
}

}  // namespace

extern "C" {

/* Every record to every peer directly, then every peer's record: one
 * round trip, the least a check before each call can cost. gloo sizes a
 * synchronous pair's socket buffer to the largest message it sends, and
 * callers keep carried data within PD_AGREE_CARRY_MAX, so writing to all
 * before reading any cannot deadlock. A peer's message longer than
 * stride (a rank in another call) is cut to stride: its record comes
 * first, which is all the comparison needs. */
static int pd_gloo_agree(pd_backend_comm* comm, const void* mine,
                         size_t bytes, void* all, size_t stride, uint32_t tag,
                         pd_backend_error* err) {
  (void)tag;  // the channel carries nothing else, in call order
  char* out = static_cast<char*>(all);
  char* own = out + static_cast<size_t>(comm->rank) * stride;
  memcpy(own, mine, bytes);
  memset(own + bytes, 0, stride - bytes);
  if (comm->size < 2)
    return PD_BACKEND_OK;
  return agree_locked(comm, err, [&](int& peer) {
    agree_send_all(comm, mine, bytes, -1, &peer);
    for (int r = 0; r < comm->size; r++) {
      if (r == comm->rank)
        continue;
      peer = r;
      agree_receive(comm->agree, r, out + static_cast<size_t>(r) * stride,
                    stride);
    }
  });
}

/* The root writes to every peer and reads nothing; a peer writes its
 * answer to the root, then reads the root's message (the answer is
 * small, and the root takes it before anything else it reads from that
 * peer, so the write never waits on the root). */
static int pd_gloo_agree_rooted(pd_backend_comm* comm, int root,
                                const void* mine, size_t bytes, void* theirs,
                                size_t cap, uint32_t tag,
                                pd_backend_error* err) {
  (void)tag;
  if (comm->size < 2)
    return PD_BACKEND_OK;
  return agree_locked(comm, err, [&](int& peer) {
    agree_send_all(comm, mine, bytes, comm->rank == root ? -1 : root, &peer);
    if (comm->rank != root) {
      peer = root;
      agree_receive(comm->agree, root, static_cast<char*>(theirs), cap);
    }
  });
}

static int pd_gloo_agree_take(pd_backend_comm* comm, int peer, void* buf,
                              size_t cap, pd_backend_error* err) {
  return agree_locked(comm, err, [&](int& at) {
    at = peer;
    agree_receive(comm->agree, peer, static_cast<char*>(buf), cap);
  });
}

/* Messages at least this large are read straight into a receive that
 * matches them (pd_p2p_sink's claim): below, a copy costs less than the
 * look for one under core's lock. */
constexpr size_t kClaimBytes = 64 * 1024;

/* Where a message of header's bytes from src is read: a claimed
 * receive's buffer (*token set) or a new allocation. */
static void* payload_room(const pd_p2p_sink& sink, int src,
                          const P2PHeader& header, void** token) {
  *token = nullptr;
  if (header.bytes >= kClaimBytes && sink.claim != nullptr) {
    void* into = sink.claim(sink.ctx, src, header.tag, header.bytes, token);
    if (into != nullptr)
      return into;
  }
  void* data = malloc(header.bytes > 0 ? header.bytes : 1);
  if (data == nullptr)
    throw std::runtime_error("out of memory for a " +
                             std::to_string(header.bytes) + "-byte message");
  return data;
}

/* Pieces a message a receive takes piece by piece is read in. */
constexpr size_t kP2PTakePiece = 1 << 20;

/* A message of header's bytes from src read a piece at a time into
 * pieces and handed to the receive that claimed it so (*token), if one
 * does; false (nothing read) if none. Where reading fails the token
 * stays set, for the caller's payload_lost (data NULL: nothing to free). */
static bool read_in_pieces(int fd, const pd_p2p_sink& sink, int src,
                           const P2PHeader& header, int timeout_ms,
                           std::vector<unsigned char>& pieces, void** token) {
  *token = nullptr;
  if (header.bytes < kP2PTakePiece || sink.claim_pieces == nullptr ||
      !sink.claim_pieces(sink.ctx, src, header.tag, header.bytes, token))
    return false;
  if (pieces.empty())
    pieces.resize(kP2PTakePiece);
  for (size_t from = 0; from < header.bytes; from += pieces.size()) {
    size_t n = std::min(pieces.size(), static_cast<size_t>(header.bytes) - from);
    channel_read(fd, pieces.data(), n, timeout_ms);
    sink.take(sink.ctx, *token, from, n, pieces.data());
  }
  return true;
}

/* A payload that could not be read: its room let go of. */
static void payload_lost(const pd_p2p_sink& sink, void* data, void* token,
                         const std::string& why) {
  if (token != nullptr)
    sink.unclaim(sink.ctx, token, why.c_str());
  else
    free(data);
}

/* The receiving thread: take the next header from any peer, then that
 * peer's payload, hand both to core, repeat until stopped. */
static void pd_gloo_receive_loop(pd_backend_comm* comm,
                                 const pd_p2p_sink sink) {
  const uint64_t header_slot = gloo::Slot::build(kP2PHeaderSlotPrefix, 0);
  const uint64_t payload_slot = gloo::Slot::build(kP2PPayloadSlotPrefix, 0);
  std::vector<int> peers;
  for (int r = 0; r < comm->size; r++)
    if (r != comm->rank)
      peers.push_back(r);
  /* Room for a header and an eager payload; a header alone (of a larger
   * message) fits too: gloo takes any message up to the posted size. */
  std::vector<unsigned char> inbox(sizeof(P2PHeader) + kP2PEagerBytes);
  try {
    for (;;) {
      P2PHeader header;
      auto header_buf =
          comm->context->createUnboundBuffer(inbox.data(), inbox.size());
      {
        std::lock_guard<std::mutex> lock(comm->receiver_mutex);
        if (comm->receiver_stopping)
          return;
        comm->receiver_waiting = header_buf.get();
      }
      header_buf->recv(peers, header_slot, 0, inbox.size());
      int src = -1;
      bool got = header_buf->waitRecv(&src, kNoDeadline);
      {
        std::lock_guard<std::mutex> lock(comm->receiver_mutex);
        comm->receiver_waiting = nullptr;
      }
      if (!got)
        return;  // stopped
      memcpy(&header, inbox.data(), sizeof(header));
      void* token = nullptr;
      void* data = payload_room(sink, src, header, &token);
      if (header.bytes <= kP2PEagerBytes) {
        if (header.bytes > 0)
          memcpy(data, inbox.data() + sizeof(header), header.bytes);
      } else {
        /* The payload follows its header on the same pair, so taking it
         * now keeps each sender's messages in order. */
        try {
          auto payload_buf =
              comm->context->createUnboundBuffer(data, header.bytes);
          payload_buf->recv(src, payload_slot, 0, header.bytes);
          payload_buf->waitRecv(comm->timeout);
        } catch (const std::exception& e) {
          payload_lost(sink, data, token,
                       std::string("gloo receive: ") + e.what());
          throw;
        }
      }
      sink.deliver(sink.ctx, src, header.tag, data, header.bytes, token);
    }
  } catch (const std::exception& e) {
    /* Tell core, which fails the receives that can no longer complete. */
    std::string msg = std::string("gloo receive: ") + e.what();
    sink.deliver(sink.ctx, -1, 0, strdup(msg.c_str()), 0, nullptr);
  }
}

/* Connect the messages' channel (with the communicator: every rank is
 * here); its sockets are found with the agreement's (comm_create). */
static void p2p_connect(pd_backend_comm* comm, gloo::rendezvous::Store& store,
                        std::shared_ptr<gloo::transport::Device>& dev) {
  P2PChannel& ch = comm->p2p;
  ch.timeout_ms = static_cast<int>(comm->timeout.count());
  ch.context =
      std::make_shared<gloo::rendezvous::Context>(comm->rank, comm->size);
  ch.context->setTimeout(comm->timeout);
  ch.context->connectFullMesh(store, dev);
  for (int r = 0; r < comm->size; r++) {
    ch.send_mutex.push_back(std::make_unique<std::mutex>());
    if (r != comm->rank)
      ch.context->getPair(r)->setSync(true, false);  // out of gloo's loop
  }
}

/* Which channels' sockets every rank found (pair_sockets), agreed in
 * one exchange so that all ranks take the same path: the messages'
 * channel is read and written by pdmpi only where every rank found its
 * sockets (else messages take the asynchronous pairs), and a broadcast's
 * chain reads and writes the agreement's sockets itself only where every
 * rank found those (else it goes through gloo's framing; a rank reading
 * raw bytes where its peer wrote gloo messages would take the framing
 * for data). */
static void channels_found(pd_backend_comm* comm) {
  bool agree_found = true, p2p_found = comm->p2p.context != nullptr;
  for (int r = 0; r < comm->size; r++) {
    if (r == comm->rank)
      continue;
    if (comm->agree.fds[r] < 0)
      agree_found = false;
    if (p2p_found && comm->p2p.fds[r] < 0)
      p2p_found = false;
  }
  uint64_t found = (agree_found ? 1u : 0u) | (p2p_found ? 2u : 0u);
  std::vector<uint64_t> all(comm->size);
  pd_backend_error err{};
  if (pd_gloo_agree(comm, &found, sizeof(found), all.data(), sizeof(found),
                    0, &err) != PD_BACKEND_OK)
    throw std::runtime_error(err.msg);
  for (int r = 0; r < comm->size; r++)
    found &= all[r];
  comm->agree.own_reads = (found & 1u) != 0;
  if ((found & 2u) == 0)
    return;
  comm->p2p.stop_fd = eventfd(0, EFD_CLOEXEC);
  if (comm->p2p.stop_fd < 0)
    throw std::runtime_error(std::string("eventfd: ") + strerror(errno));
  comm->p2p.active = true;
}

/* The receiving thread on the messages' channel: wait until a peer's
 * socket has data, read that peer's message (and its payload, which
 * follows on the same socket), hand it to core, repeat until stopped.
 * A read starts only once data has come, so the pair's lock, which a
 * read holds, never keeps this rank's senders waiting on a quiet peer. */
static void pd_gloo_receive_channel(pd_backend_comm* comm,
                                    const pd_p2p_sink sink) {
  P2PChannel& ch = comm->p2p;
  std::vector<struct pollfd> polled;
  std::vector<int> rank_of;
  for (int r = 0; r < comm->size; r++) {
    if (r == comm->rank)
      continue;
    polled.push_back({ch.fds[r], POLLIN, 0});
    rank_of.push_back(r);
  }
  polled.push_back({ch.stop_fd, POLLIN, 0});
  const size_t stop = polled.size() - 1;
  std::vector<unsigned char> pieces;  // see read_in_pieces
  int src = -1;
  try {
    for (;;) {
      for (auto& p : polled)
        p.revents = 0;
      /* Look with yields for a while, then sleep. */
      int ready = poll_yielding(polled.data(), polled.size());
      if (ready == 0)
        ready = poll(polled.data(), polled.size(), -1);
      if (ready < 0) {
        if (errno == EINTR)
          continue;
        throw std::runtime_error(std::string("poll: ") + strerror(errno));
      }
      if (polled[stop].revents != 0)
        return;  // stopped
      for (size_t i = 0; i < stop; i++) {
        if (polled[i].revents == 0)
          continue;
        src = rank_of[i];
        P2PHeader header;
        void* data = nullptr;
        void* token = nullptr;
        try {
          channel_read(ch.fds[src], &header, sizeof(header), ch.timeout_ms);
          if (read_in_pieces(ch.fds[src], sink, src, header, ch.timeout_ms,
                             pieces, &token)) {
            sink.deliver(sink.ctx, src, header.tag, nullptr, header.bytes,
                         token);
            continue;
          }
          data = payload_room(sink, src, header, &token);
          channel_read(ch.fds[src], data, header.bytes, ch.timeout_ms);
        } catch (const ChannelClosed&) {
          /* The peer closed its end (it freed the communicator; what it
           * sent before came first) or died: nothing more comes from it.
           * Receives that wait for it are failed by core's watch, which
           * names the rank that is gone; one that was taking this
           * message's payload fails here. */
          if (data != nullptr || token != nullptr)
            payload_lost(sink, data, token,
                         "the connection to rank " + std::to_string(src) +
                             " closed while its " +
                             std::to_string(header.bytes) +
                             "-byte message was being received");
          polled[i].fd = -1;
          continue;
        } catch (const std::exception& e) {
          if (data != nullptr || token != nullptr)
            payload_lost(sink, data, token,
                         "gloo receive from rank " + std::to_string(src) +
                             ": " + e.what());
          throw;
        }
        sink.deliver(sink.ctx, src, header.tag, data, header.bytes, token);
      }
    }
  } catch (const std::exception& e) {
    /* Tell core, which fails the receives that can no longer complete. */
    std::string msg = std::string("gloo receive") +
                      (src >= 0 ? " from rank " + std::to_string(src) : "") +
                      ": " + e.what();
    sink.deliver(sink.ctx, -1, 0, strdup(msg.c_str()), 0, nullptr);
  }
}

static int pd_gloo_p2p_start(pd_backend_comm* comm, const pd_p2p_sink* sink,
                             pd_backend_error* err) {
  try {
    if (comm->p2p.active) {
      comm->receiver = std::thread(pd_gloo_receive_channel, comm, *sink);
    } else {
      comm->receiver = std::thread(pd_gloo_receive_loop, comm, *sink);
    }
    return PD_BACKEND_OK;
  } catch (const std::exception& e) {
    return fail(err, "receiver start", e);
  }
}

static void pd_gloo_p2p_stop(pd_backend_comm* comm) {
  P2PChannel& ch = comm->p2p;
  if (ch.active) {
    if (comm->receiver.joinable()) {
      uint64_t one = 1;
      if (write(ch.stop_fd, &one, sizeof(one)) != sizeof(one))
        return;  // cannot happen for an eventfd below its maximum
      comm->receiver.join();
    }
    if (ch.stop_fd >= 0)
      close(ch.stop_fd);
    ch.stop_fd = -1;
    return;
  }
  if (!comm->receiver.joinable())
    return;
  {
    std::lock_guard<std::mutex> lock(comm->receiver_mutex);
    comm->receiver_stopping = true;
    if (comm->receiver_waiting != nullptr)
      comm->receiver_waiting->abortWaitRecv();
  }
  comm->receiver.join();
}

/* write() to rank dst on the messages' channel, under its lock; a
 * failure names dst. */
static void p2p_locked_write(pd_backend_comm* comm, int dst,
                             const std::function<void(int, int)>& write) {
  std::lock_guard<std::mutex> lock(*comm->p2p.send_mutex[dst]);
  try {
    write(comm->p2p.fds[dst], comm->p2p.timeout_ms);
  } catch (const std::exception& e) {
    throw std::runtime_error("to rank " + std::to_string(dst) + ": " +
                             e.what());
  }
}

/* A message on the messages' channel: written before this returns. */
static void p2p_write(pd_backend_comm* comm, int dst, int tag,
                      const void* data, size_t bytes) {
  P2PHeader header = p2p_header(bytes, tag);
  struct iovec iov[2] = {{&header, sizeof(header)},
                         {const_cast<void*>(data), bytes}};
  p2p_locked_write(comm, dst, [&](int fd, int timeout_ms) {
    channel_write(fd, iov, bytes > 0 ? 2 : 1, timeout_ms);
  });
}

/* Pieces a packed message is written in. Measured 2026-12-04, np 2 with
 * PDMPI_SHM=0, a ping-pong of every other int, three alternating runs:
 * pieces of 1 MiB were level with packing the whole message first
 * (0.94-1.08x its time at 1-16 MiB), of 128 KiB 1.13-1.41x slower from
 * 2 MiB (each write that fills the socket waits for the reader, and
 * small writes wait more often). */
constexpr size_t kP2PPackPiece = 1 << 20;

/* A message on the messages' channel, its payload packed by source a
 * piece at a time between writes: no packed copy of the whole. */
static void p2p_write_packed(pd_backend_comm* comm, int dst, int tag,
                             const pd_p2p_source* source, size_t bytes) {
  P2PHeader header = p2p_header(bytes, tag);
  std::vector<unsigned char> piece(std::min(kP2PPackPiece, bytes));
  p2p_locked_write(comm, dst, [&](int fd, int timeout_ms) {
    /* The header goes with the first piece. */
    size_t n = piece.size();
    if (n > 0)
      source->pack(source->ctx, 0, n, piece.data());
    struct iovec first[2] = {{&header, sizeof(header)}, {piece.data(), n}};
    channel_write(fd, first, n > 0 ? 2 : 1, timeout_ms);
    for (size_t off = n; off < bytes; off += n) {
      n = std::min(piece.size(), bytes - off);
      source->pack(source->ctx, off, n, piece.data());
      struct iovec next = {piece.data(), n};
      channel_write(fd, &next, 1, timeout_ms);
    }
  });
}

static int pd_gloo_p2p_post_packed(pd_backend_comm* comm, int dst, int tag,
                                   const pd_p2p_source* source, size_t bytes,
                                   pd_backend_error* err) {
  if (!comm->p2p.active)
    return PD_BACKEND_ERR_UNSUPPORTED;
  try {
    p2p_write_packed(comm, dst, tag, source, bytes);
    return PD_BACKEND_OK;
  } catch (const std::exception& e) {
    return fail(err, "send", e);
  }
}

static int pd_gloo_p2p_post(pd_backend_comm* comm, int dst, int tag,
                            const void* data, size_t bytes, pd_p2p_send** out,
                            pd_backend_error* err) {
  try {
    if (comm->p2p.active) {
      p2p_write(comm, dst, tag, data, bytes);
      *out = nullptr;  // complete
      return PD_BACKEND_OK;
    }
    auto send = std::make_unique<pd_p2p_send>();
    send->header = p2p_header(bytes, tag);
    /* Header and payload are posted together, in call order, so messages
     * from this rank reach the peer in the order they were sent. */
    const uint64_t header_slot = gloo::Slot::build(kP2PHeaderSlotPrefix, 0);
    if (bytes <= kP2PEagerBytes) {
      send->packed.resize(sizeof(send->header) + bytes);
      memcpy(send->packed.data(), &send->header, sizeof(send->header));
      if (bytes > 0)
        memcpy(send->packed.data() + sizeof(send->header), data, bytes);
      send->header_buf = comm->context->createUnboundBuffer(
          send->packed.data(), send->packed.size());
      send->header_buf->send(dst, header_slot, 0, send->packed.size());
      *out = send.release();
      return PD_BACKEND_OK;
    }
    send->header_buf =
        comm->context->createUnboundBuffer(&send->header, sizeof(send->header));
    send->header_buf->send(dst, header_slot, 0, sizeof(send->header));
    if (bytes > 0) {
      send->payload_buf =
          comm->context->createUnboundBuffer(const_cast<void*>(data), bytes);
      send->payload_buf->send(dst, gloo::Slot::build(kP2PPayloadSlotPrefix, 0),
                              0, bytes);
    }
    *out = send.release();
    return PD_BACKEND_OK;
  } catch (const std::exception& e) {
    return fail(err, "send", e);
  }
}

static int pd_gloo_p2p_wait(pd_backend_comm* comm, pd_p2p_send* send,
                            pd_backend_error* err) {
  std::unique_ptr<pd_p2p_send> owned(send);
  try {
    if (!owned->header_buf->waitSend(comm->timeout) ||
        (owned->payload_buf && !owned->payload_buf->waitSend(comm->timeout)))
      throw std::runtime_error("send aborted");
    return PD_BACKEND_OK;
  } catch (const std::exception& e) {
    return fail(err, "send", e);
  }
}

static void pd_gloo_describe(pd_backend_comm* comm, char* buf, size_t len) {
  (void)comm;
  std::lock_guard<std::mutex> lock(device_mutex);
  snprintf(buf, len, "gloo %d.%d.%d, tcp transport on %s", GLOO_VERSION_MAJOR,
           GLOO_VERSION_MINOR, GLOO_VERSION_PATCH, device_desc.c_str());
}

/* Field by field, not by position: C++17 has no designated initialisers,
 * and a field added to the vtable must not shift the others. */
static pd_backend_ops pd_gloo_ops() {
  pd_backend_ops o{};
  o.name = "gloo";
  o.comm_create = pd_gloo_comm_create;
  o.comm_destroy = pd_gloo_comm_destroy;
  o.allreduce = pd_gloo_allreduce;
  o.reduce = pd_gloo_reduce;
  o.bcast = pd_gloo_bcast;
  o.allgather = pd_gloo_allgather;
  o.barrier = pd_gloo_barrier;
  o.exchange = pd_gloo_exchange;
  o.agree = pd_gloo_agree;
  o.agree_rooted = pd_gloo_agree_rooted;
  o.agree_take = pd_gloo_agree_take;
  o.p2p_start = pd_gloo_p2p_start;
  o.p2p_stop = pd_gloo_p2p_stop;
  o.p2p_post = pd_gloo_p2p_post;
  o.p2p_post_packed = pd_gloo_p2p_post_packed;
  o.p2p_wait = pd_gloo_p2p_wait;
  o.describe = pd_gloo_describe;
  return o;
}

const pd_backend_ops pd_backend_gloo = pd_gloo_ops();

}  // extern "C"
