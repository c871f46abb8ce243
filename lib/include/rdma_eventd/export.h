// Marks the library's public API. librdma-eventd is built with hidden visibility, so only what
// carries RDMA_EVENTD_EXPORT is part of its ABI; everything else (nlohmann, the internal schema
// library) stays private to the shared object. The version script (lib/librdma-eventd.map) puts
// what is exported in its version node; lib/exported-symbols.txt lists it.
#pragma once

#if defined(__GNUC__)
#define RDMA_EVENTD_EXPORT __attribute__((visibility("default")))
#else
#define RDMA_EVENTD_EXPORT
#endif
