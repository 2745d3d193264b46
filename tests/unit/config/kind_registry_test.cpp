// The sampler and target tables cover their proto oneofs: a new field in SamplerConfig.kind or
// TargetConfig.kind without a row (or a row under the wrong name) fails here, not at run time.
#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "config/sampler_kinds.hpp"
#include "config/target_kinds.hpp"

namespace pemc::config {
namespace {

namespace pb = google::protobuf;

const pb::OneofDescriptor& kind_oneof(const pb::Descriptor* message) {
  const auto* oneof = message->FindOneofByName("kind");
  EXPECT_NE(oneof, nullptr) << message->full_name();
  return *oneof;
}

TEST(ConfigKindRegistry, EverySamplerOneofCaseHasOneCompleteRowInFieldOrder) {
  const auto& oneof = kind_oneof(v1::SamplerConfig::descriptor());
  const auto& rows = sampler_kinds();
  EXPECT_EQ(rows.size(), static_cast<std::size_t>(oneof.field_count()));
  for (int i = 0; i < oneof.field_count(); ++i) {
    const auto* field = oneof.field(i);
    const auto kind = static_cast<v1::SamplerConfig::KindCase>(field->number());
    const SamplerKind* row = find_sampler_kind(kind);
    ASSERT_NE(row, nullptr) << "no sampler_kinds() row for sampler." << field->name();
    if (static_cast<std::size_t>(i) < rows.size()) {
      EXPECT_EQ(row, &rows[i]) << field->name() << " is not the oneof's field " << i;
    }
    EXPECT_EQ(row->name, field->name());
    EXPECT_NE(row->apply_defaults, nullptr) << field->name();
    EXPECT_NE(row->validate, nullptr) << field->name();
    EXPECT_NE(row->make, nullptr) << field->name();
  }
  EXPECT_EQ(find_sampler_kind(v1::SamplerConfig::KIND_NOT_SET), nullptr);
}

TEST(ConfigKindRegistry, EveryTargetOneofCaseHasOneCompleteRowInFieldOrder) {
  const auto& oneof = kind_oneof(v1::TargetConfig::descriptor());
  const auto& rows = target_kinds();
  EXPECT_EQ(rows.size(), static_cast<std::size_t>(oneof.field_count()));
  for (int i = 0; i < oneof.field_count(); ++i) {
    const auto* field = oneof.field(i);
    const auto kind = static_cast<v1::TargetConfig::KindCase>(field->number());
    const TargetKind* row = find_target_kind(kind);
    ASSERT_NE(row, nullptr) << "no target_kinds() row for target." << field->name();
    if (static_cast<std::size_t>(i) < rows.size()) {
      EXPECT_EQ(row, &rows[i]) << field->name() << " is not the oneof's field " << i;
    }
    EXPECT_EQ(row->name, field->name());
    EXPECT_NE(row->validate, nullptr) << field->name();
    EXPECT_NE(row->make, nullptr) << field->name();
  }
  EXPECT_EQ(find_target_kind(v1::TargetConfig::KIND_NOT_SET), nullptr);
}

// Rows are found by their oneof case, so two rows for one case would hide the second.
TEST(ConfigKindRegistry, NoKindHasTwoRows) {
  std::set<int> samplers, targets;
  for (const auto& row : sampler_kinds()) EXPECT_TRUE(samplers.insert(row.kind).second) << row.name;
  for (const auto& row : target_kinds()) EXPECT_TRUE(targets.insert(row.kind).second) << row.name;
}

}  // namespace
}  // namespace pemc::config
