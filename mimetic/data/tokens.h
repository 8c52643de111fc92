// TokenLayout: the token ids of the copy-style tasks, Jelassi et al.'s tokenizer generalised to any
// content vocabulary (Jelassi et al. 2024, "Repeat After Me"): content tokens 0 .. V-1, then '$' (BOS) = V,
// '|' (SEP) = V+1,
// '.' (EOS) = V+2, '*' (PAD) = V+3; the model's vocabulary is V+4.
//
//   TokenLayout layout{26};
//   layout.bos();          // 26, as in Jelassi's 26-letter alphabet
//   layout.model_vocab();  // 30
//
// The tasks that are not copy-like (Zoology MQAR, composite function, inverse sequence) have no
// special tokens; their headers document their own encodings.
#ifndef MIMETIC_DATA_TOKENS_H_
#define MIMETIC_DATA_TOKENS_H_

namespace mimetic::data {

struct TokenLayout {
  int vocab = 0;  // V: number of content tokens, ids 0 .. V-1.

  int bos() const { return vocab; }      // '$', opens every example.
  int sep() const { return vocab + 1; }  // '|', ends the prompt; the answer is predicted from here.
  int eos() const { return vocab + 2; }  // '.', ends the answer (trained, not scored at eval).
  int pad() const { return vocab + 3; }  // '*', fills eval rows after the example.
  int model_vocab() const { return vocab + 4; }
};

}  // namespace mimetic::data

#endif  // MIMETIC_DATA_TOKENS_H_
