#pragma once
// The content of what a run reads, so that --resume continues only on the same inputs: every file
// the resolved config names (a string field named "*_file" or "library" in a run's target, sampler
// or init: data files, number files, the Stan program and its data, plugin libraries) and every
// Stan model's compiled library, each with its SHA-256 (core/sha256.hpp). The checkpoint stores
// them (Checkpoint.inputs); a resume whose inputs differ is refused, naming the first that does.
// The record file's header stores them too (Header.inputs), for reports that open a data file.
// Not covered: files a plugin opens by itself (named in its argument) and files a Stan program
// #includes (a changed include changes the run only once the model is rebuilt, and then the
// compiled library's hash differs).
#include <filesystem>
#include <vector>

#include "pemc/v1/inputs.pb.h"
#include "pemc/v1/config.pb.h"

namespace pemc::runner {

// The files the configs of `runs` (one plain run, or a study's resolved runs) name, each once,
// named by the first field that names it ("target.stan.data_file", in a study "run 'NAME':
// target..."). Reads and hashes them; builds nothing.
pemc::v1::InputFiles named_input_files(const std::vector<pemc::v1::RunConfig>& runs);

// named_input_files() and each Stan model's compiled library (built, or found in the cache).
pemc::v1::InputFiles input_files_of(const std::vector<pemc::v1::RunConfig>& runs);

// ConfigError naming the checkpoint file and the first input of `now` that differs from the
// checkpoint's: another path, changed content, or (when missing_is_error) no hash recorded (a
// checkpoint of a pemc-dist before content hashes).
void check_input_files(const pemc::v1::InputFiles& checkpointed, const pemc::v1::InputFiles& now,
                       const std::filesystem::path& checkpoint, bool missing_is_error = true);

}  // namespace pemc::runner
