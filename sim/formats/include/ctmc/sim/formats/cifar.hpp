// CIFAR-10 binary batches (https://www.cs.toronto.edu/~kriz/cifar.html,
// "binary version"): records of 1 label byte (0..9) followed by 3072 pixel
// bytes -- 1024 red, 1024 green, 1024 blue, each 32x32 row-major. A batch
// file is a whole number of records (10000 in the official files, and in
// every file of a folder: load_cifar_dir); it may be gzip-compressed.
//
// Errors (ctmc::InputError naming the file): empty or truncated file (size not
// a multiple of 3073 bytes), more than kCifarMaxRecords records (found at the
// first piece read or inflated beyond them: a gzip bomb or /dev/zero is not
// read on), label byte above 9.
#pragma once
#include <string>
#include <vector>

#include "ctmc/sim/formats/dataset.hpp"

namespace ctmc::sim {

inline constexpr int kCifarSide = 32;
inline constexpr int kCifarChannels = 3;
inline constexpr int kCifarRecordBytes = 1 + kCifarChannels * kCifarSide * kCifarSide;  // 3073
// Records per batch file at most: every official CIFAR-10 batch has 10000.
inline constexpr int kCifarMaxRecords = 10000;

// One batch: images 3072 x n (channel-major, pixels / 255), rows = cols = 32, channels = 3.
Dataset read_cifar_batch(const std::string& path);

// Several batches concatenated in the order given.
Dataset read_cifar_batches(const std::vector<std::string>& paths);

inline constexpr int kCifarTrainBatches = 5;

// The records of every batch file in a CIFAR-10 folder: 10000, as in the
// binary version's files, unless CTMC_SNN_CIFAR_BATCH_RECORDS gives another
// count from 1 to 10000 (small synthetic folders of the same layout, for
// tests); InputError naming the variable for anything else.
int cifar_batch_records();

// The full set of a CIFAR-10 folder, checked before anything is read:
// data_batch_1.bin ... data_batch_5.bin and test_batch.bin all present (the
// message lists every missing one), each a regular file (a pipe or device is
// refused without waiting on it) of exactly cifar_batch_records() records
// (a gzip file: checked once inflated, by load_cifar_dir). InputError naming
// the folder or the file.
void check_cifar_dir(const std::string& dir);

// A CIFAR-10 folder (check_cifar_dir): the five training batches in order
// (train) and test_batch.bin (test).
DatasetSplit load_cifar_dir(const std::string& dir);

}  // namespace ctmc::sim
