// Outputs never replace inputs: a command that writes checks, before any
// work, that none of its outputs is one of its inputs (`sweep merge p1 p2
// --out p1`, `sweep --out NET.json`), which the all-or-nothing writer would
// otherwise replace without a word.
//
// Two paths are the same file when they reach the same device and inode
// through any symbolic links (stat(2)), so a link, a hard link or a "./x"
// spelling of an input is caught as well as the input's own name.
#pragma once
#include <string>
#include <vector>

namespace ctmc::io {

// An output as the user named it: the option and the path.
struct NamedOutput {
  std::string option;  // "--out"
  std::string path;
};

// Several outputs named by one option (a manifest and its weights file).
inline std::vector<NamedOutput> named_outputs(const std::string& option, const std::vector<std::string>& paths) {
  std::vector<NamedOutput> out;
  for (const auto& p : paths) out.push_back({option, p});
  return out;
}

// InputError "<option>: '<output>' is the input '<input>' (the same file);
// writing it would replace that input" for the first output that exists and
// is the same file as an input. Inputs that do not exist are skipped (their
// reader reports them); an input that is a folder stands for the files
// directly in it (a data folder's IDX files).
void refuse_outputs_over_inputs(const std::vector<NamedOutput>& outputs, const std::vector<std::string>& inputs);

// An input as the user named it: where it was named (an option, or a claims
// file's claim and field) and the path.
struct NamedInput {
  std::string source;  // "--sweeps", "claims.json: c1: model"
  std::string path;
};

// Whether `path` is `folder` or lies below it, symbolic links followed; false
// when either cannot be resolved.
bool in_folder(const std::string& path, const std::string& folder);

// A writer that replaces a whole folder (a report folder <out>/<name>) would
// remove an input at or below it. InputError "<source>: '<path>' is in the
// folder '<folder>' that <writer> replaces (<option>); writing it would
// remove that input" for the first input there (symbolic links followed; inputs and a
// folder that do not exist yet are skipped).
void refuse_inputs_in_replaced_folder(const std::string& folder, const std::string& writer, const std::string& option,
                                      const std::vector<NamedInput>& inputs);

}  // namespace ctmc::io
