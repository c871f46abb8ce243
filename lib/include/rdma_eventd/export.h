// Marks the library's public API. librdma-eventd is built with hidden visibility, so only what
// carries RDMA_EVENTD_EXPORT is part of its ABI; everything else (nlohmann, helpers) stays
// private to the shared object.
#pragma once

#if defined(__GNUC__)
#define RDMA_EVENTD_EXPORT __attribute__((visibility("default")))
#else
#define RDMA_EVENTD_EXPORT
#endif
