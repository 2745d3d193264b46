#pragma once
// ChainSummary.model_messages (records.proto) as one line for people: "37 proposals rejected:
// '...' (35), '...' (2)"; "" when the chain had none. The run log, summarize and diagnose show it.
#include <string>

#include "pemc/v1/records.pb.h"

namespace pemc::records {

std::string describe_model_messages(
    const google::protobuf::RepeatedPtrField<v1::ModelMessage>& messages);

}  // namespace pemc::records
