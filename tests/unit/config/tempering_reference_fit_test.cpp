#include "config/samplers/tempering_reference_fit.hpp"

#include <gtest/gtest.h>
#include <google/protobuf/text_format.h>

#include <string>

#include "core/error.hpp"
#include "targets/gaussian.hpp"
#include "tempering/from_config.hpp"

namespace pemc::config {
namespace {

v1::TemperingReferenceConfig reference_config(const std::string& text) {
  v1::TemperingReferenceConfig c;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &c)) << text;
  return c;
}

// A fitted tempering reference is continuous tempering's base density: a user-given Gaussian base
// gives the same psi as that Gaussian given inline, with its log zeta, and a Laplace fit of a
// Gaussian target is exact.
TEST(TemperingReferenceFit, IsTheBaseDensityFit) {
  const targets::Gaussian target(Vector::Constant(2, 1.0), 4.0 * Matrix::Identity(2, 2));
  const auto inline_ref =
      tempering::make_reference(reference_config("mean: 1 variance: 4"), 2, "R");
  const auto given = tempering::make_reference(
      reference_config("fitted { gaussian { mean: [1, 1] variance: [4, 4] log_zeta: 7 } }"),
      target, "R", reference_fitter({}));
  Vector x(2);
  x << 0.3, -2.0;
  EXPECT_NEAR(given->density->potential(x), inline_ref->density->potential(x), 1e-12);
  EXPECT_EQ(given->log_zeta, 7.0);
  const auto laplace = tempering::make_reference(
      reference_config("fitted { laplace { search { n_starts: 3 } } }"), target, "R",
      reference_fitter({}));
  EXPECT_NEAR(laplace->density->potential(x), inline_ref->density->potential(x), 1e-6);
}

TEST(TemperingReferenceFit, ErrorsNameTheField) {
  const targets::Gaussian target(Vector::Zero(2), Matrix::Identity(2, 2));
  try {
    tempering::make_reference(reference_config("fitted { gaussian { mean: [1, 1] } }"), target,
                              "sampler.parallel_tempering.reference", reference_fitter({}));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sampler.parallel_tempering.reference.fitted.gaussian"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pemc::config
