// Where libonnx 1.12's shape inference stops short of what later ONNX releases infer: the views
// would show the dims it invents for what it does not compute ("unk__3"), and memory and cost
// estimates would have nothing to go on. The missing rules run after libonnx's own and only ever
// make a shape more specific.
//
//   Einsum   1.12 infers the output's rank only; its dims follow from the equation (the rule of
//            ONNX 1.13 on): a letter's size from any input that has it, "..." broadcast across
//            inputs, the implicit output ("ij,jk") the ellipsis then each letter used once, sorted.

#include "onnx/schemacheckdetail.h"

#include <algorithm>
#include <map>
#include <onnx/defs/schema.h>
#include <optional>
#include <set>

namespace opscope::schemadetail {
namespace {

using onnx::TensorShapeProto_Dimension;

// One term: letters, with at most one "..." (written as '.').
std::optional<std::string> parseTerm(const std::string &term)
{
    std::string out;
    for (std::size_t i = 0; i < term.size(); ++i) {
        const char c = term[i];
        if (c == ' ')
            continue;
        if (c == '.') {
            if (term.compare(i, 3, "...") != 0 || out.find('.') != std::string::npos)
                return std::nullopt;
            out.push_back('.');
            i += 2;
        } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            out.push_back(c);
        } else {
            return std::nullopt;
        }
    }
    return out;
}

// Two sizes of one letter or one broadcast position: what the output can say of it.
TensorShapeProto_Dimension merge(const TensorShapeProto_Dimension &a, const TensorShapeProto_Dimension &b,
                                 bool broadcast)
{
    if (broadcast && a.has_dim_value() && a.dim_value() == 1)
        return b;
    if (broadcast && b.has_dim_value() && b.dim_value() == 1)
        return a;
    if (a.has_dim_value() && b.has_dim_value())
        return a.dim_value() == b.dim_value() ? a : TensorShapeProto_Dimension();
    if (a.has_dim_value())
        return a;
    if (b.has_dim_value())
        return b;
    if (a.has_dim_param() && b.has_dim_param() && a.dim_param() == b.dim_param())
        return a;
    return a.has_dim_param() && !b.has_dim_param() && !b.has_dim_value() ? a : TensorShapeProto_Dimension();
}

void einsumDims(onnx::InferenceContext &ctx)
{
    const onnx::AttributeProto *attr = ctx.getAttribute("equation");
    if (!attr || ctx.getNumOutputs() != 1)
        return;
    std::string equation = attr->s();
    const std::size_t arrow = equation.find("->");
    const std::string left = equation.substr(0, arrow);
    std::vector<std::string> terms;
    for (std::size_t start = 0;;) {
        const std::size_t comma = left.find(',', start);
        const auto term = parseTerm(left.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (!term)
            return;
        terms.push_back(*term);
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    if (terms.size() != ctx.getNumInputs())
        return;

    std::map<char, TensorShapeProto_Dimension> letters;
    std::map<char, int> uses;
    std::vector<TensorShapeProto_Dimension> ellipsis; // right-aligned broadcast of every input's "..."
    for (std::size_t i = 0; i < terms.size(); ++i) {
        const onnx::TypeProto *t = ctx.getInputType(i);
        if (!t || !t->tensor_type().has_shape())
            return;
        const auto &shape = t->tensor_type().shape();
        const std::string &term = terms[i];
        const bool hasEllipsis = term.find('.') != std::string::npos;
        const int named = int(term.size()) - (hasEllipsis ? 1 : 0);
        const int spread = shape.dim_size() - named; // dims the ellipsis stands for
        if (spread < 0 || (!hasEllipsis && spread != 0))
            return;
        int d = 0;
        for (char c : term) {
            if (c == '.') {
                if (std::size_t(spread) > ellipsis.size())
                    ellipsis.insert(ellipsis.begin(), std::size_t(spread) - ellipsis.size(), TensorShapeProto_Dimension());
                for (int k = 0; k < spread; ++k) {
                    auto &slot = ellipsis[ellipsis.size() - std::size_t(spread) + std::size_t(k)];
                    const bool first = !slot.has_dim_value() && !slot.has_dim_param();
                    slot = first ? shape.dim(d + k) : merge(slot, shape.dim(d + k), true);
                }
                d += spread;
                continue;
            }
            const auto [it, fresh] = letters.emplace(c, shape.dim(d));
            if (!fresh)
                it->second = merge(it->second, shape.dim(d), false);
            ++uses[c];
            ++d;
        }
    }

    std::string output;
    if (arrow != std::string::npos) {
        const auto term = parseTerm(equation.substr(arrow + 2));
        if (!term)
            return;
        output = *term;
    } else {
        output = ellipsis.empty() && std::none_of(terms.begin(), terms.end(), [](const std::string &t) {
                     return t.find('.') != std::string::npos;
                 })
                     ? ""
                     : ".";
        for (const auto &[c, n] : uses) // std::map: sorted, as numpy orders the implicit output
            if (n == 1)
                output.push_back(c);
    }
    TensorShapeProto_Dimension unknown;
    std::vector<TensorShapeProto_Dimension> dims;
    for (char c : output) {
        if (c == '.') {
            dims.insert(dims.end(), ellipsis.begin(), ellipsis.end());
            continue;
        }
        const auto it = letters.find(c);
        if (it == letters.end())
            return; // an output letter no input has: libonnx has already said so
        dims.push_back(it->second);
    }
    onnx::TypeProto *out = ctx.getOutputType(0);
    if (!out || !out->has_tensor_type())
        return;
    auto *shape = out->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() != 0 && shape->dim_size() != int(dims.size()))
        return; // libonnx disagrees on the rank: leave its answer
    shape->clear_dim();
    for (const auto &d : dims)
        *shape->add_dim() = d;
}

} // namespace

void installInferenceGaps()
{
    // After libonnx's own rule, which checks the equation and sets the rank.
    wrapInference("Einsum", [](onnx::InferenceFunction original) -> onnx::InferenceFunction {
        return [original](onnx::InferenceContext &ctx) {
            if (original)
                original(ctx);
            einsumDims(ctx);
        };
    });
}

} // namespace opscope::schemadetail
