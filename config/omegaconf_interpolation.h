// OmegaConf's interpolations in a YAML tree (config/yaml_tree.h), as NeMo's
// recipes write them: a value that is one "${...}" becomes the value it
// names, so that an importer reads numbers where the file computes them.
//   ${model.encoder_seq_length}   a key from the top ("training." in front,
//                                 as NeMo-Framework-Launcher writes, is
//                                 dropped when the top has no such table)
//   ${.hidden_size}               a key of the same table (each further dot
//                                 one table up)
//   ${multiply:4, ${.hidden_size}}  NeMo's resolvers multiply, divide_ceil,
//                                 divide_floor, subtract and sum, on numbers
// A value with text around an interpolation ("${data_dir}/vocab.json") is
// left as it is: importers do not read such paths.
// Errors (to the sink, at the value's file:line:col): a key that is not
// there, a resolver not in the list, an argument that is no number, a cycle.
// The value then becomes null (absent), so that one reading reports the rest.
// Thread safety: mutates the tree it is given.
#pragma once

#include "config/config_error.h"
#include "config/config_tree.h"

namespace clustersim::sim {

void resolve_interpolations(ConfigNode& root, DiagnosticSink& sink);

}  // namespace clustersim::sim
