#pragma once
// ChainSummary.model_messages (records.proto) as one line for people: "37 proposals rejected:
// '...' (35), '...' (2)"; "" when the chain had none. The run log, summarize and diagnose show it.
#include <string>

#include "pemc/v1/records.pb.h"

namespace pemc::records {

// How a kind of model message reads: what happened once ("rejected a proposal"), and the count's
// noun ("proposals rejected").
struct ModelMessageWords {
  const char* event;
  const char* counted;
};
ModelMessageWords model_message_words(v1::ModelMessage::Kind kind);

std::string describe_model_messages(
    const google::protobuf::RepeatedPtrField<v1::ModelMessage>& messages);

}  // namespace pemc::records
