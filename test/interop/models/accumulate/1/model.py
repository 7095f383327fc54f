"""Plain Triton Python-backend stateful model: OUTPUT0 = running sum of INPUT0 over
the sequence (reset on START, state dropped on END). Uses the CORRID control input
(UINT64 correlation IDs; string IDs are not supported by this model).
max_batch_size 4 gives the direct-strategy sequence batcher 4 slots, so up to
4 sequences can be open at once; each request has shape [1, 1]."""
import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        self._totals = {}

    def execute(self, requests):
        responses = []
        for request in requests:
            value = int(pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy().reshape(-1)[0])
            start = int(pb_utils.get_input_tensor_by_name(request, "START").as_numpy().reshape(-1)[0])
            end = int(pb_utils.get_input_tensor_by_name(request, "END").as_numpy().reshape(-1)[0])
            corrid = int(pb_utils.get_input_tensor_by_name(request, "CORRID").as_numpy().reshape(-1)[0])
            total = (0 if start else self._totals.get(corrid, 0)) + value
            if end:
                self._totals.pop(corrid, None)
            else:
                self._totals[corrid] = total
            out = pb_utils.Tensor("OUTPUT0", np.array([[total]], dtype=np.int32))
            responses.append(pb_utils.InferenceResponse(output_tensors=[out]))
        return responses
