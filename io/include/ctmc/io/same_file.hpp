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

// InputError "<option>: '<output>' is the input '<input>' (the same file);
// writing it would replace that input" for the first output that exists and
// is the same file as an input. Inputs that do not exist are skipped (their
// reader reports them); an input that is a folder stands for the files
// directly in it (a data folder's IDX files).
void refuse_outputs_over_inputs(const std::vector<NamedOutput>& outputs, const std::vector<std::string>& inputs);

}  // namespace ctmc::io
