// Tests of the rank layout (src/parallel/layout.hpp): roles per the table in the header, every
// chain on exactly one worker, chains_of consistent with worker_of_chain.
#include "parallel/layout.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <vector>

namespace pemc::parallel {
namespace {

TEST(Layout, RolesFollowTheDocumentedTable) {
  for (int n = 1; n <= 64; ++n) {
    SCOPED_TRACE(n);
    const Layout l = make_layout(n);
    EXPECT_EQ(l.n_ranks, n);
    EXPECT_EQ(l.coordinator, 0);
    // Workers are ascending and distinct, inside [0, n).
    ASSERT_TRUE(std::is_sorted(l.workers.begin(), l.workers.end()));
    EXPECT_EQ(std::set<int>(l.workers.begin(), l.workers.end()).size(), l.workers.size());
    if (n >= 4) {
      // rank 0: coordinator + worker; 1..n-2: workers; n-1: dedicated collector.
      EXPECT_EQ(l.collector, n - 1);
      std::vector<int> expected(static_cast<std::size_t>(n - 1));
      for (int r = 0; r < n - 1; ++r) expected[static_cast<std::size_t>(r)] = r;
      EXPECT_EQ(l.workers, expected);
      EXPECT_FALSE(l.is_worker(l.collector)) << "collector must be dedicated";
    } else {
      // rank 0 does everything; the other ranks are workers.
      EXPECT_EQ(l.collector, 0);
      std::vector<int> expected(static_cast<std::size_t>(n));
      for (int r = 0; r < n; ++r) expected[static_cast<std::size_t>(r)] = r;
      EXPECT_EQ(l.workers, expected);
    }
    EXPECT_TRUE(l.is_worker(0)) << "rank 0 always samples";
    // Dedicated collector iff n >= 4.
    const bool dedicated = l.collector != l.coordinator && !l.is_worker(l.collector);
    EXPECT_EQ(dedicated, n >= 4);
    // Every rank has at least one role.
    for (int r = 0; r < n; ++r)
      EXPECT_TRUE(l.is_worker(r) || r == l.collector || r == l.coordinator) << "idle rank " << r;
    EXPECT_FALSE(l.is_worker(-1));
    EXPECT_FALSE(l.is_worker(n));
  }
}

TEST(Layout, EveryChainRunsOnExactlyOneWorker) {
  for (int n = 1; n <= 64; ++n) {
    const Layout l = make_layout(n);
    for (int n_chains : {0, 1, 2, 3, 7, 64, 100, 129}) {
      SCOPED_TRACE(::testing::Message() << "n_ranks=" << n << " n_chains=" << n_chains);
      std::vector<int> owners(static_cast<std::size_t>(n_chains), 0);
      std::size_t max_load = 0, min_load = SIZE_MAX;
      for (int r = 0; r < n; ++r) {
        const auto chains = l.chains_of(r, n_chains);
        if (!l.is_worker(r)) {
          EXPECT_TRUE(chains.empty()) << "non-worker rank " << r << " got chains";
          continue;
        }
        EXPECT_TRUE(std::is_sorted(chains.begin(), chains.end())) << "rank " << r;
        for (int c : chains) {
          ASSERT_GE(c, 0);
          ASSERT_LT(c, n_chains);
          ++owners[static_cast<std::size_t>(c)];
          // chains_of agrees with worker_of_chain.
          EXPECT_EQ(l.worker_of_chain(c), r) << "chain " << c;
        }
        max_load = std::max(max_load, chains.size());
        min_load = std::min(min_load, chains.size());
      }
      for (int c = 0; c < n_chains; ++c) {
        EXPECT_EQ(owners[static_cast<std::size_t>(c)], 1) << "chain " << c;
        EXPECT_TRUE(l.is_worker(l.worker_of_chain(c))) << "chain " << c;
      }
      // Round-robin: loads differ by at most one.
      EXPECT_LE(max_load - min_load, 1u);
    }
  }
}

TEST(Layout, RoundRobinByGlobalChainId) {
  const Layout l = make_layout(6);  // workers 0..4, collector 5
  EXPECT_EQ(l.chains_of(0, 12), (std::vector<int>{0, 5, 10}));
  EXPECT_EQ(l.chains_of(4, 12), (std::vector<int>{4, 9}));
  EXPECT_TRUE(l.chains_of(5, 12).empty());
  EXPECT_EQ(l.worker_of_chain(7), 2);
}

TEST(Layout, RejectsNonPositiveRankCounts) {
  EXPECT_THROW(make_layout(0), std::invalid_argument);
  EXPECT_THROW(make_layout(-3), std::invalid_argument);
}

}  // namespace
}  // namespace pemc::parallel
