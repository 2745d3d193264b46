// An extended target's weighted view reaches every draw record (extra_states, log_weights, extra):
// the records are what pemc-report forms weighted estimates from.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "runner/chain_driver.hpp"

namespace pemc::runner {
namespace {

// State (x, a) with a standard normal density; it "represents" the sample x with log weight a.
class ToyExtended final : public targets::Target {
 public:
  int dim() const override { return 2; }
  int original_dim() const override { return 1; }
  std::string name() const override { return "toy_extended"; }
  double potential(ConstVectorRef x) const override { return 0.5 * x.squaredNorm(); }
  double potential_and_gradient(ConstVectorRef x, VectorRef g) const override {
    g = x;
    return 0.5 * x.squaredNorm();
  }
  bool weighted_view(ConstVectorRef x, targets::WeightedView& out) const override {
    out.samples = Matrix::Constant(1, 1, x[0]);
    out.log_weights = Vector::Constant(1, x[1]);
    out.extra = {42.0, x[1]};
    return true;
  }
};

TEST(ChainDriverWeightedView, EveryDrawCarriesTheView) {
  v1::RunConfig c;
  c.set_name("view");
  c.mutable_target()->mutable_gaussian()->add_mean(0.0);
  auto* h = c.mutable_sampler()->mutable_hmc();
  h->set_step_size(0.3);
  h->set_n_leapfrog(5);
  h->set_metric(v1::UNIT);
  c.set_warmup(0);
  c.set_iterations(20);
  c.mutable_init()->set_uniform_radius(1.0);
  std::vector<v1::Draw> draws;
  ChainCallbacks cb;
  cb.emit = [&](const v1::Record& r) { draws.push_back(r.draw()); };
  const auto summary = run_chain(c, std::make_shared<ToyExtended>(), ChainTask{0, 7}, cb);
  ASSERT_EQ(summary.status(), "ok");
  ASSERT_EQ(draws.size(), 20u);
  for (const auto& d : draws) {
    ASSERT_EQ(d.state_size(), 2);
    ASSERT_EQ(d.extra_states_size(), 1);
    ASSERT_EQ(d.log_weights_size(), 1);
    ASSERT_EQ(d.extra_size(), 2);
    EXPECT_EQ(d.extra_states(0), d.state(0));
    EXPECT_EQ(d.log_weights(0), d.state(1));
    EXPECT_EQ(d.extra(0), 42.0);
  }
}

}  // namespace
}  // namespace pemc::runner
