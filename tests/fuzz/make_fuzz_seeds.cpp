// Writes the seed corpora and dictionaries the fuzzers start from (run_fuzzers.sh calls it):
//   make_fuzz_seeds OUTDIR CONFIG.pbtxt...
// OUTDIR/seeds/<fuzzer>/ gets valid inputs (the given text configs, their binary encodings, a small
// record file, a CSV, a Boltzmann machine, --set lines); OUTDIR/<fuzzer>.dict gets the config schema's
// field and enum names, so the fuzzers reach deep fields quickly.
#include <google/protobuf/descriptor.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>

#include "config/load.hpp"
#include "records/record_file.hpp"
#include "runner/checkpoint.hpp"

namespace fs = std::filesystem;
namespace pb = google::protobuf;

namespace {

void write(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << bytes;
}

// Every field name, enum value name and dotted scalar path (for --set) reachable from `d`.
void collect(const pb::Descriptor* d, const std::string& prefix, int depth, std::set<std::string>& names,
             std::set<std::string>& paths) {
  if (depth > 6) return;
  for (int i = 0; i < d->field_count(); ++i) {
    const auto* f = d->field(i);
    names.insert(f->name());
    const std::string path = prefix.empty() ? f->name() : prefix + "." + f->name();
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      if (!f->is_repeated()) collect(f->message_type(), path, depth + 1, names, paths);
      else collect(f->message_type(), "", depth + 1, names, paths);  // names only
    } else {
      if (!f->is_repeated()) paths.insert(path);
      if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_ENUM)
        for (int k = 0; k < f->enum_type()->value_count(); ++k) names.insert(f->enum_type()->value(k)->name());
    }
  }
}

std::string dict_entry(const std::string& s) {
  // libFuzzer's dictionary syntax: printable bytes as is, '"' and '\\' escaped, others as \xNN.
  static const char* hex = "0123456789ABCDEF";
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: make_fuzz_seeds OUTDIR CONFIG.pbtxt...\n";
    return 2;
  }
  const fs::path out = argv[1];
  const fs::path seeds = out / "seeds";

  // Configs: text as given, and binary encodings of the ones that parse.
  pemc::v1::RunConfig first;
  bool have_first = false;
  for (int i = 2; i < argc; ++i) {
    const fs::path p = argv[i];
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string stem = p.stem().string();
    write(seeds / "fuzz_config_text" / (stem + ".pbtxt"), ss.str());
    try {
      const auto loaded = pemc::config::parse_text_config(ss.str(), p);
      write(seeds / "fuzz_config_binary" / (stem + ".pb"), loaded.config.SerializeAsString());
      if (!have_first) {
        first = loaded.config;
        have_first = true;
      }
    } catch (const std::exception& e) {
      std::cerr << "make_fuzz_seeds: skipping binary seed for " << p << ": " << e.what() << "\n";
    }
  }

  // A small record file: header, warmup and sampling draws, footer; and the same records as
  // fuzz_report_records reads them (each a 2-byte length and the serialised record).
  {
    const fs::path rec = seeds / "fuzz_records" / "small.pemc";
    fs::create_directories(rec.parent_path());
    pemc::records::RecordWriter w(rec, {/*overwrite=*/true});
    std::string report_seed;
    const auto add = [&](const pemc::v1::Record& record) {
      w.write(record);
      const std::string payload = record.SerializeAsString();
      report_seed += static_cast<char>(payload.size() & 0xff);
      report_seed += static_cast<char>((payload.size() >> 8) & 0xff);
      report_seed += payload;
    };
    pemc::v1::Record r;
    auto* h = r.mutable_header();
    if (have_first) *h->mutable_config() = first;
    h->set_dim(2);
    h->set_n_chains(1);
    h->set_target_name("gaussian");
    h->set_sampler_name("hmc");
    auto* info = h->add_runs();
    info->set_name(have_first ? first.name() : std::string());
    info->set_dim(2);
    info->set_original_dim(2);
    info->mutable_truth()->add_mean(0.0);
    info->mutable_truth()->add_mean(0.0);
    h->set_task_end(1);
    h->set_n_tasks(1);
    add(r);
    for (int it = 0; it < 4; ++it) {
      pemc::v1::Record d;
      auto* draw = d.mutable_draw();
      draw->set_run_id(have_first ? first.name() : std::string());
      draw->set_chain_id(0);
      draw->set_seed(11);
      draw->set_iteration(it);
      draw->set_warmup(it < 2);
      draw->add_state(0.5 * it);
      draw->add_state(-1.0 * it);
      draw->set_potential(1.25);
      draw->set_accept_stat(0.9);
      add(d);
    }
    pemc::v1::Record f;
    auto* c = f.mutable_footer()->add_chains();
    c->set_chain_id(0);
    c->set_n_draws(2);
    c->set_status("ok");
    (*c->mutable_estimates())["mean[0]"] = 0.5;
    f.mutable_footer()->set_status("ok");
    f.mutable_footer()->set_n_records(5);
    add(f);
    w.close();
    write(seeds / "fuzz_report_records" / "small.bin", report_seed);
  }

  // A checkpoint (a running and a finished chain) as a file, and its content alone (the fuzzer
  // also decodes every input wrapped in a correct header).
  {
    pemc::v1::Checkpoint c;
    c.set_format_version(pemc::runner::kCheckpointFormatVersion);
    c.set_record_bytes(1000);
    c.set_n_records(5);
    c.set_task_begin(0);
    c.set_task_end(3);
    c.set_n_ranks(2);
    c.set_group_size(1);
    c.set_sequence(1);
    c.add_completed()->set_chain_id(0);
    auto* k = c.add_in_progress();
    k->set_chain_id(2);
    k->set_next_iteration(17);
    k->add_x(0.5);
    k->add_x(-1);
    k->add_grad(0.1);
    k->add_grad(0.2);
    k->set_group_size(1);
    k->mutable_kernel()->set_kind("hmc");
    (*k->mutable_kernel()->mutable_reals())["step_size"].add_values(0.1);
    if (have_first) *c.mutable_plan() = first;
    c.add_options("--iterations");
    c.add_options("100");
    write(seeds / "fuzz_checkpoint" / "small.ckpt", pemc::runner::encode_checkpoint(c));
    write(seeds / "fuzz_checkpoint" / "content.pb", c.SerializeAsString());
  }

  write(seeds / "fuzz_csv" / "small.csv", "y,x1,x2\n1,0.5,-2\n0,1e-3,  7 \r\n1,3,4\n\n");
  write(seeds / "fuzz_csv" / "one.csv", "a\n1\n");
  write(seeds / "fuzz_boltzmann" / "two.txt", std::string("0 1.5\n1.5 0\n") + '\0' + "0.1 -0.2\n");
  write(seeds / "fuzz_boltzmann" / "three_q.txt",
        std::string("0 1 2\n1 0 -3\n2 -3 0\n") + '\0' + "1 2 3" + '\0' + "\x0a" + "1 2\n3 4\n");
  write(seeds / "fuzz_set_override" / "a.txt",
        "sampler.hmc.step_size=0.05\niterations=100\nseeds.base=7\nseeds.count=3\n");
  write(seeds / "fuzz_set_override" / "b.txt", "output.path=out/x.pemc\nwarmup = 10\nname=abc\n");

  // Dictionaries.
  std::set<std::string> names, paths;
  collect(pemc::v1::RunConfig::descriptor(), "", 0, names, paths);
  std::string text_dict, set_dict;
  for (const auto& n : names) text_dict += dict_entry(n);
  for (const char* t : {"{", "}", ": ", "[", "]", ",", "#", "true", "false", "inf", "nan", "-", "1e308",
                        "\"", "<", ">", "1e-320", "9223372036854775807", "18446744073709551616"})
    text_dict += dict_entry(t);
  for (const auto& p : paths) set_dict += dict_entry(p + "=");
  for (const char* t : {"true", "false", "inf", "-inf", "nan", "1e308", "-1", "0", "4294967296",
                        "9223372036854775808", "0x10", "1e-400"})
    set_dict += dict_entry(t);
  write(out / "fuzz_config_text.dict", text_dict);
  write(out / "fuzz_set_override.dict", set_dict);
  write(out / "fuzz_csv.dict", dict_entry(",") + dict_entry("\r\n") + dict_entry("1e308") +
                                   dict_entry("1e309") + dict_entry("nan") + dict_entry("inf") +
                                   dict_entry("-0") + dict_entry("0x1p3"));
  write(out / "fuzz_boltzmann.dict", dict_entry(" ") + dict_entry("\n") + dict_entry("+1") +
                                         dict_entry("1e309") + dict_entry("nan")+ dict_entry(std::string(1, '\0')));
  write(out / "fuzz_checkpoint.dict", dict_entry(std::string(pemc::runner::kCheckpointMagic)) +
                                          dict_entry(std::string("\x02\0\0\0", 4)) +
                                          dict_entry("hmc") + dict_entry("nuts") +
                                          dict_entry("step_size"));
  std::cout << "make_fuzz_seeds: wrote seeds and dictionaries under " << out << " (" << names.size()
            << " names, " << paths.size() << " --set paths)\n";
  return 0;
}
