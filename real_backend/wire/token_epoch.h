#pragma once
// The epoch an abort_token_issuer starts with (core/abort_token.h): 64 random bits from
// libsodium's CSPRNG, never zero, drawn at every start of an issuer, so that a restarted rank
// never mints a token that an earlier capture matches. The simulator draws its epochs from
// its seed instead; here nothing is replayed, so nothing needs to be reproducible.
//
// The cluster key comes from the same CSPRNG (draw_cluster_key): a constant key in the source
// would let anyone who reads the code mint drain-ACKs.
#include <cstdint>

#include "core/abort_token.h"

namespace kvsim::real {

std::uint64_t draw_token_epoch();
core::cluster_key draw_cluster_key();

}  // namespace kvsim::real
