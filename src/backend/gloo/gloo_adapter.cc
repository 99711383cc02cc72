/*
 * The gloo backend: host-memory collectives between processes over TCP.
 *
 * This is pdmpi's one C++ file. It exposes the C backend vtable
 * (backend/backend.h) and uses only gloo's option-style API: mixing it
 * with gloo's older algorithm classes on one context makes steps wait on
 * 40 ms delayed ACKs. Every entry point catches every exception, so no
 * C++ exception crosses into C.
 */
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/config.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
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
      strstr(e.what(), "timed out") != nullptr)
    return PD_BACKEND_ERR_TIMEOUT;
  return PD_BACKEND_ERR_IO;
}

/* gloo sizes segments by sizeof(T); only the size of T matters, so an
 * opaque element of the datatype's extent keeps segments whole. */
template <size_t N>
struct Elem {
  unsigned char bytes[N];
};

}  // namespace

struct pd_backend_comm {
  std::shared_ptr<gloo::rendezvous::Context> context;
  int rank;
  int size;
  std::chrono::milliseconds timeout;
  std::vector<unsigned char> scratch;  // reduce output on non-root ranks
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

int unsupported_size(pd_backend_error* err, const char* what, size_t size) {
  snprintf(err->msg, sizeof(err->msg),
           "gloo %s: elements of %zu bytes are not supported", what, size);
  return PD_BACKEND_ERR_UNSUPPORTED;
}

}  // namespace

extern "C" {

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
    *out = comm.release();
    return PD_BACKEND_OK;
  } catch (const std::exception& e) {
    return fail(err, "connect", e);
  }
}

static void pd_gloo_comm_destroy(pd_backend_comm* comm) {
  try {
    delete comm;
  } catch (...) {
  }
}

static int pd_gloo_allreduce(pd_backend_comm* comm, const pd_coll_args* a,
                             pd_backend_error* err) {
  if (a->count == 0)
    return PD_BACKEND_OK;
  try {
    int rc = with_elem_type(a->elem_size, [&](auto elem) {
      using T = decltype(elem);
      gloo::AllreduceOptions opts(comm->context);
      if (a->sendbuf != nullptr && a->sendbuf != a->recvbuf)
        opts.setInput(static_cast<T*>(const_cast<void*>(a->sendbuf)), a->count);
      opts.setOutput(static_cast<T*>(a->recvbuf), a->count);
      opts.setReduceFunction(a->reduce);
      opts.setTag(a->tag);
      opts.setTimeout(comm->timeout);
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
    if (comm->rank != a->root) {
      comm->scratch.resize(a->count * a->elem_size);
      output = comm->scratch.data();
    }
    int rc = with_elem_type(a->elem_size, [&](auto elem) {
      using T = decltype(elem);
      gloo::ReduceOptions opts(comm->context);
      if (a->sendbuf != nullptr && a->sendbuf != output)
        opts.setInput(static_cast<T*>(const_cast<void*>(a->sendbuf)), a->count);
      opts.setOutput(static_cast<T*>(output), a->count);
      opts.setRoot(a->root);
      opts.setReduceFunction(a->reduce);
      opts.setTag(a->tag);
      opts.setTimeout(comm->timeout);
      gloo::reduce(opts);
      return static_cast<int>(PD_BACKEND_OK);
    });
    if (comm->scratch.size() > (64u << 20))
      std::vector<unsigned char>().swap(comm->scratch);  // don't pin huge scratch
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

static void pd_gloo_describe(pd_backend_comm* comm, char* buf, size_t len) {
  (void)comm;
  std::lock_guard<std::mutex> lock(device_mutex);
  snprintf(buf, len, "gloo %d.%d.%d, tcp transport on %s", GLOO_VERSION_MAJOR,
           GLOO_VERSION_MINOR, GLOO_VERSION_PATCH, device_desc.c_str());
}

const pd_backend_ops pd_backend_gloo = {
    "gloo",
    pd_gloo_comm_create,
    pd_gloo_comm_destroy,
    pd_gloo_allreduce,
    pd_gloo_reduce,
    pd_gloo_bcast,
    pd_gloo_allgather,
    pd_gloo_barrier,
    pd_gloo_describe,
};

}  // extern "C"
