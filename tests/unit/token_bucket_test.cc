#include "core/token_bucket.h"

#include <gtest/gtest.h>

namespace rdma_eventd::daemon {
namespace {

int takes(TokenBucket& b, int64_t now_us, int tries) {
  int n = 0;
  for (int i = 0; i < tries; ++i)
    n += b.take(now_us);
  return n;
}

TEST(TokenBucket, AFullBucketAllowsABurstOfTheRateThenRefillsAtTheRate) {
  // Given a bucket of 100 per second, 100 requests at once pass and the 101st does not;
  // 10 ms later exactly one more passes, and after a second a whole burst again.
  TokenBucket b(100, 0);
  EXPECT_EQ(takes(b, 0, 150), 100);
  EXPECT_EQ(takes(b, 9999, 5), 0);
  EXPECT_EQ(takes(b, 10000, 5), 1);
  EXPECT_EQ(takes(b, 1010000, 500), 100);
}

TEST(TokenBucket, ASteadyRateAtTheLimitIsNeverRefused) {
  TokenBucket b(50, 0);
  EXPECT_EQ(takes(b, 0, 50), 50);
  int passed = 0;
  for (int64_t t = 20000; t <= 10000000; t += 20000)  // one every 20 ms for 10 s
    passed += b.take(t);
  EXPECT_EQ(passed, 500);
}

TEST(TokenBucket, AClockThatGoesBackAddsNothingAndALongPauseRefillsOnlyTheBurst) {
  TokenBucket b(3, 5000000);
  EXPECT_EQ(takes(b, 5000000, 10), 3);
  EXPECT_EQ(takes(b, 1000000, 10), 0);
  EXPECT_EQ(takes(b, INT64_MAX / 2, 10), 3);
}

TEST(TokenBucket, ANewRateStartsWithAFullBurstOfItsOwn) {
  TokenBucket b(100, 0);
  EXPECT_EQ(takes(b, 0, 100), 100);
  b.set_rate(1000, 0);
  EXPECT_EQ(b.rate(), 1000u);
  EXPECT_EQ(takes(b, 0, 2000), 1000);
  b.set_rate(5, 0);
  EXPECT_EQ(takes(b, 0, 10), 5);
  EXPECT_EQ(takes(b, 200000, 10), 1);
}

TEST(TokenBucket, ABurstOfItsOwnHoldsMoreThanASecondOfTheRate) {
  // Given 2 per second with bursts of 5: 5 pass at once, then one each 500 ms, and only a
  // pause of 2.5 s fills the bucket again.
  TokenBucket b(2, 5, 0);
  EXPECT_TRUE(b.full(0));
  EXPECT_EQ(takes(b, 0, 10), 5);
  EXPECT_FALSE(b.full(0));
  EXPECT_EQ(takes(b, 499999, 5), 0);
  EXPECT_EQ(takes(b, 500000, 5), 1);
  EXPECT_FALSE(b.full(2999999));
  EXPECT_TRUE(b.full(3000000));
  EXPECT_EQ(takes(b, 3000000, 10), 5);
}

}  // namespace
}  // namespace rdma_eventd::daemon
