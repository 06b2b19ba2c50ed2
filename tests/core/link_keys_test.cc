#include "core/link_keys.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "core/message_proof.h"

namespace kvsim::core::link_keys_test {
namespace {

cluster_key make_key(std::uint8_t fill) {
  cluster_key key;
  key.bytes.fill(fill);
  return key;
}

TEST(LinkKeys, BothEndsDeriveOneKeyAndEveryOtherLinkAnother) {
  const cluster_key cluster = make_key(3);
  EXPECT_EQ(derive_link_key(cluster, 0, 5).bytes, derive_link_key(cluster, 5, 0).bytes);
  std::set<std::vector<std::uint8_t>> seen;
  for (rank_id a = 0; a < 6; ++a) {
    for (rank_id b = a; b < 6; ++b) {
      const cluster_key link = derive_link_key(cluster, a, b);
      EXPECT_NE(link.bytes, cluster.bytes) << "a link key is not the cluster key";
      EXPECT_TRUE(seen.insert({link.bytes.begin(), link.bytes.end()}).second) << a << "-" << b;
    }
  }
  // The pair is encoded whole: (1, 2^32 - 1) and (0, x) never collide through the packing.
  EXPECT_NE(derive_link_key(cluster, 1, 0xffffffffu).bytes, derive_link_key(cluster, 0, 1).bytes);
  EXPECT_NE(derive_link_key(cluster, 0, 5).bytes, derive_link_key(make_key(4), 0, 5).bytes);
}

TEST(LinkKeys, AKeyringHoldsItsOwnLinksOnly) {
  const link_keyring ring(2, make_key(3), {0, 1});
  EXPECT_EQ(ring.size(), 2u);
  EXPECT_NE(ring.find(0), nullptr);
  EXPECT_NE(ring.find(1), nullptr);
  EXPECT_EQ(ring.find(9), nullptr);
  // A link's token key and message key are the same link seen in two domains: neither MAC
  // passes for the other.
  const abort_token token{{7, 1}, 2, 0, 5, 1, {}};
  control_message message{control_kind::abort_ack, 0, {7, 1}, token, {}, {}};
  message.proof = ring.find(0)->messages.sign(message, 2);
  abort_token with_proof_as_mac = token;
  with_proof_as_mac.mac = *message.proof;
  EXPECT_FALSE(ring.find(0)->tokens.verify(with_proof_as_mac));
}

TEST(MessageProof, CoversEveryFieldOfTheMessageAndItsReceiver) {
  const message_mac link(derive_link_key(make_key(3), 0, 2));
  const abort_token token{{7, 1}, 2, 0, 5, 1, {}};
  control_message message{control_kind::abort_ack, 0, {7, 1}, token, {3, 4}, kv_status::failed};
  message.proof = link.sign(message, 2);
  ASSERT_TRUE(link.verify(message, 2));
  EXPECT_FALSE(link.verify(message, 3)) << "another receiver";
  std::vector<control_message> altered(10, message);
  altered[0].kind = control_kind::chunk_ready;
  altered[1].from = 1;
  altered[2].key.room = 8;
  altered[3].key.generation = 2;
  altered[4].status.reset();
  altered[5].token->nonce = 2;
  altered[6].token->mac[0] ^= 1;
  altered[7].token.reset();
  altered[8].pages.push_back(5);
  altered[9].pages[1] = 5;
  for (std::size_t i = 0; i < altered.size(); ++i) {
    EXPECT_FALSE(link.verify(altered[i], 2)) << "alteration " << i;
  }
  control_message unproven = message;
  unproven.proof.reset();
  EXPECT_FALSE(link.verify(unproven, 2));
}

}  // namespace
}  // namespace kvsim::core::link_keys_test
