import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import { ErrorCode, InfergateError } from '@infergate/core';
import type { ChatMessage } from '@infergate/llm';

function unsupported(what: string): InfergateError {
  return new InfergateError(
    ErrorCode.InvalidArgument,
    `${what} are not supported by infergate chat models (text messages only)`,
  );
}

/**
 * The AI SDK's prompt as infergate chat messages. Text parts are joined; reasoning parts of earlier
 * assistant turns are dropped (providers do not take them back as text); files and tool calls are
 * refused with INVALID_ARGUMENT rather than silently lost.
 */
export function toChatMessages(prompt: LanguageModelV4Prompt): ChatMessage[] {
  return prompt.map((message): ChatMessage => {
    switch (message.role) {
      case 'system':
        return { role: 'system', content: message.content };
      case 'user':
        return {
          role: 'user',
          content: message.content
            .map((part) => {
              if (part.type !== 'text') throw unsupported('file parts');
              return part.text;
            })
            .join(''),
        };
      case 'assistant':
        return {
          role: 'assistant',
          content: message.content
            .map((part) => {
              if (part.type === 'text') return part.text;
              if (part.type === 'reasoning') return '';
              throw unsupported(`assistant '${part.type}' parts`);
            })
            .join(''),
        };
      default:
        throw unsupported('tool messages');
    }
  });
}
