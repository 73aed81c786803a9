#pragma once
// Pipeline placement: the graph cut into contiguous stages of its dependency order, one per
// device, balanced by predicted (or measured) op time — what a user who outgrew one device runs
// with micro-batches (GPipe): stage s works on micro-batch m while stage s+1 works on m-1.
//
//     order:  a b c | d e f g | h i      stage 0 on dev0, 1 on dev1, 2 on dev2
//     time →  dev0: m0 m1 m2 m3
//             dev1:    m0 m1 m2 m3        fill, steady state, drain: with M micro-batches and
//             dev2:       m0 m1 m2 m3     S stages, (S−1)/(M+S−1) of the devices' time is idle
//
// Edges only go forward (from a stage to a later one), so a micro-batch never waits for a later
// stage: each stage can start the next micro-batch as soon as it has sent the last one's tensors.

#include "schedule/placement.h"
#include "schedule/scheduler.h"

namespace opscope::schedule {

// The cut that minimizes the slowest stage (binary search over the stage budget, greedy fill),
// within each device's memory cap (DeviceModel::memoryBytes, counted as greedy counts it: the
// weights a stage's nodes read, their outputs and what it receives): a stage ends where its
// device's memory runs out even when its time budget does not. Where the caps cannot hold the
// graph, the last stage takes the rest and `overflows` says so. Fewer nodes than devices leaves
// the last devices empty. start: the dependency order's running
// time, so one batch runs the stages one after the other.
Expected<Placement> placePipeline(const Graph &graph, const CostModel &model, std::size_t stages = 0);

// The share of S stages' time a GPipe schedule of M micro-batches leaves idle: (S−1)/(M+S−1).
double idealBubble(int microbatches, int stages);

// What a schedule of one batch over its stages predicts for M micro-batches: each stage does 1/M
// of its work per micro-batch, the slowest one sets the pace once the pipeline is full, so the
// makespan is that stage's time × (M+S−1)/M.
struct PipelinePrediction
{
    int stages = 0; // devices with work
    double makespanSeconds = 0.0;
    double bubble = 0.0; // ideal (S−1)/(M+S−1)
};
PipelinePrediction predictPipeline(const Schedule &schedule, std::size_t devices, int microbatches);

} // namespace opscope::schedule
